#include "compiler/schedule/ScheduleSimulation.h"

#include "compiler/schedule/TaskCost.h"
#include "core/protocol/EventProtocol.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <sstream>
#include <tuple>

namespace mk {

namespace {

std::string checkCoverage(const TaskGraph &graph, const Schedule &schedule) {
  std::vector<uint32_t> seen(graph.tasks.size(), 0);
  for (const auto &queue : schedule.queues)
    for (uint32_t task : queue) {
      if (task >= graph.tasks.size())
        return "the schedule names task " + std::to_string(task) + ", which does not exist";
      if (++seen[task] > 1)
        return "task " + std::to_string(task) + " is scheduled twice";
    }
  for (uint32_t task = 0; task < seen.size(); ++task)
    if (!seen[task] && !graph.tasks[task].runsInline)
      return "task " + std::to_string(task) + " is in no queue";
  return "";
}

// A fixed function of (task, step), so that runs are reproducible.
double jitterFactor(uint32_t task, uint64_t step, double jitter) {
  uint64_t x = (uint64_t(task) << 32 | step) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  double unit = static_cast<double>(x >> 11) / static_cast<double>(uint64_t(1) << 53);
  return 1.0 + jitter * (2.0 * unit - 1.0);
}

} // namespace

SimulationResult simulateSchedule(const TaskGraph &graph, const Schedule &schedule,
                                  const TargetDescription &target,
                                  const SimulationOptions &options) {
  uint64_t steps = options.steps;
  SimulationResult result;
  result.problem = checkCoverage(graph, schedule);
  if (!result.problem.empty())
    return result;

  size_t sms = schedule.queues.size();
  std::vector<uint64_t> counter(graph.events.size(), 0);
  std::vector<uint64_t> position(sms, 0); // step * queue length + index
  std::vector<bool> busy(sms, false);
  // (finish time, SM): the earliest finish first, lower SM on ties.
  std::priority_queue<std::tuple<double, size_t>, std::vector<std::tuple<double, size_t>>,
                      std::greater<>>
      running;
  double now = 0.0, lastStepStart = std::numeric_limits<double>::infinity();

  // Inline tasks: the one after each event, and the one each SM runs now.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> inlineOf(graph.events.size(), kNone), inlineRunning(sms, kNone);
  std::vector<uint64_t> inlineStep(sms, 0);
  for (const Task &task : graph.tasks)
    if (task.runsInline && task.waits.size() == 1 && task.waits[0].event < graph.events.size())
      inlineOf[task.waits[0].event] = task.id;

  auto done = [&](size_t sm) { return position[sm] >= steps * schedule.queues[sm].size(); };
  auto head = [&](size_t sm) -> const Task & {
    const auto &queue = schedule.queues[sm];
    return graph.tasks[queue[position[sm] % queue.size()]];
  };
  auto stepOf = [&](size_t sm) { return position[sm] / schedule.queues[sm].size(); };
  // The first wait of the SM's head task that is not yet satisfied, if any.
  auto blockingWait = [&](size_t sm) -> const Wait * {
    int64_t step = stepOf(sm);
    for (const Wait &wait : head(sm).waits)
      if (counter[wait.event] <
          mk_event_threshold(graph.events[wait.event].triggerCount, step, wait.stepOffset))
        return &wait;
    return nullptr;
  };

  while (true) {
    for (size_t sm = 0; sm < sms; ++sm) {
      if (busy[sm] || done(sm) || blockingWait(sm))
        continue;
      busy[sm] = true;
      if (stepOf(sm) + 1 == steps)
        lastStepStart = std::min(lastStepStart, now);
      double seconds = taskSeconds(graph, head(sm), target) *
                       jitterFactor(head(sm).id, stepOf(sm), options.jitter);
      running.push({now + seconds, sm});
    }
    if (running.empty())
      break;
    auto [finish, sm] = running.top();
    running.pop();
    now = finish;
    const Task *ended;
    uint64_t step;
    if (inlineRunning[sm] != kNone) {
      ended = &graph.tasks[inlineRunning[sm]];
      step = inlineStep[sm];
      inlineRunning[sm] = kNone;
    } else {
      ended = &head(sm);
      step = stepOf(sm);
      ++position[sm];
    }
    uint32_t event = ended->trigger;
    ++counter[event];
    uint32_t inlined = inlineOf[event];
    if (inlined != kNone &&
        counter[event] == mk_event_threshold(graph.events[event].triggerCount, step, 0)) {
      // The SM stays busy with the task run inline after this trigger.
      inlineRunning[sm] = inlined;
      inlineStep[sm] = step;
      running.push({now + taskSeconds(graph, graph.tasks[inlined], target) *
                              jitterFactor(inlined, step, options.jitter),
                    sm});
      continue;
    }
    busy[sm] = false;
  }

  std::ostringstream stuck;
  for (size_t sm = 0; sm < sms; ++sm) {
    if (done(sm))
      continue;
    const Task &task = head(sm);
    const Wait *wait = blockingWait(sm);
    stuck << "SM " << sm << " step " << stepOf(sm) << ": task " << task.id << " ("
          << graph.operations[task.op].name << ") waits on event " << wait->event << " '"
          << graph.events[wait->event].name << "' at " << counter[wait->event] << " of "
          << graph.events[wait->event].triggerCount << " per step\n";
  }
  result.problem = stuck.str();
  result.completed = result.problem.empty();
  result.steps = steps;
  result.seconds = now;
  result.secondsPerStep = result.completed && steps > 0 ? now - lastStepStart : 0.0;
  return result;
}

} // namespace mk
