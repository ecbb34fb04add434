// The schedule: every task in exactly one queue (an inline task in none),
// and queues that finish.
//
// With counters that only grow and waits that only ask for a counter to
// reach a threshold, running a task never disables another one. So if one
// in-order execution of the queues runs every task, every execution does,
// and one simulation decides deadlock freedom for all timings. Two steps are
// run so that waits with step offset -1 ask for something.
#include "core/protocol/EventProtocol.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/ValidatorChecks.h"

#include <deque>
#include <optional>

namespace mk::validation {

namespace {

// The event each inline task runs after (UINT32_MAX: none), or a problem:
// an inline task waits on one event of its own step, on this rank, that no
// other inline task waits on and no inline task triggers (no chains).
std::string inlineTasksByEvent(const TaskGraph &graph, std::vector<uint32_t> &inlineOf) {
  inlineOf.assign(graph.events.size(), UINT32_MAX);
  for (const Task &task : graph.tasks) {
    if (!task.runsInline)
      continue;
    if (task.waits.size() != 1 || task.waits[0].stepOffset != 0 || task.waits[0].allRanks)
      return cat(describeTask(graph, task.id),
                 " runs inline, so it needs exactly one wait, on an event of its own step on its "
                 "own rank; it has ", task.waits.size());
    uint32_t event = task.waits[0].event;
    if (inlineOf[event] != UINT32_MAX)
      return cat(describeTask(graph, task.id), " and ", describeTask(graph, inlineOf[event]),
                 " both run inline after ", describeEvent(graph, event));
    inlineOf[event] = task.id;
  }
  for (const Task &task : graph.tasks)
    if (task.runsInline && inlineOf[task.trigger] != UINT32_MAX)
      return cat(describeTask(graph, task.id), " runs inline and triggers ",
                 describeEvent(graph, task.trigger), ", after which ",
                 describeTask(graph, inlineOf[task.trigger]), " runs inline: no chains");
  return "";
}

} // namespace

std::string checkQueues(const TaskGraph &graph, const Schedule &schedule) {
  std::vector<uint32_t> inlineOf;
  if (std::string problem = inlineTasksByEvent(graph, inlineOf); !problem.empty())
    return problem;
  if (schedule.numSms == 0)
    return "the schedule has no SMs";
  if (schedule.queues.size() != schedule.numSms)
    return cat("the schedule has ", schedule.queues.size(), " queues for ", schedule.numSms, " SMs");
  constexpr uint32_t nowhere = UINT32_MAX;
  std::vector<uint32_t> smOf(graph.tasks.size(), nowhere);
  for (uint32_t sm = 0; sm < schedule.numSms; ++sm) {
    const std::vector<uint32_t> &queue = schedule.queues[sm];
    for (size_t position = 0; position < queue.size(); ++position) {
      uint32_t task = queue[position];
      if (task >= graph.tasks.size())
        return cat("entry ", position, " of SM ", sm, "'s queue is ", describeTask(graph, task));
      if (graph.tasks[task].runsInline)
        return cat(describeTask(graph, task), " runs inline, yet SM ", sm, " queues it");
      if (smOf[task] != nowhere)
        return cat(describeTask(graph, task), " is queued twice: on SM ", smOf[task], " and on SM ",
                   sm);
      smOf[task] = sm;
    }
  }
  for (uint32_t task = 0; task < graph.tasks.size(); ++task)
    if (smOf[task] == nowhere && !graph.tasks[task].runsInline)
      return cat(describeTask(graph, task), " is in no SM's queue");
  return "";
}

namespace {

class QueueSimulation {
public:
  QueueSimulation(const TaskGraph &graph, const Schedule &schedule, uint64_t steps)
      : graph(graph), schedule(schedule), steps(steps), next(schedule.numSms),
        counters(graph.events.size()), waiting(graph.events.size()) {
    inlineTasksByEvent(graph, inlineOf); // checkQueues has checked them
  }

  std::string run();

private:
  bool finished(uint32_t sm) const { return next[sm] == steps * schedule.queues[sm].size(); }
  uint64_t stepOf(uint32_t sm) const { return next[sm] / schedule.queues[sm].size(); }
  const Task &headOf(uint32_t sm) const {
    const auto &queue = schedule.queues[sm];
    return graph.tasks[queue[next[sm] % queue.size()]];
  }
  uint64_t threshold(const Wait &wait, uint64_t step) const {
    return mk_event_threshold(graph.events[wait.event].triggerCount, static_cast<int64_t>(step),
                              wait.stepOffset);
  }
  // Runs the SM's queue until it ends or waits; returns the event it waits on.
  std::optional<uint32_t> advance(uint32_t sm);
  // A trigger of `event` in `step`, and the inline task it completes.
  void trigger(uint32_t event, uint64_t step);
  std::string deadlockReport() const;

  const TaskGraph &graph;
  const Schedule &schedule;
  uint64_t steps;
  std::vector<uint64_t> next; // per SM: steps done x queue length + position
  std::vector<uint64_t> counters;
  std::vector<std::vector<uint32_t>> waiting; // per event: SMs stopped on it
  std::vector<uint32_t> inlineOf;             // per event: the task run inline after it
  std::deque<uint32_t> ready;
};

void QueueSimulation::trigger(uint32_t event, uint64_t step) {
  ++counters[event];
  for (uint32_t waiter : waiting[event])
    ready.push_back(waiter);
  waiting[event].clear();
  uint32_t inlined = inlineOf[event];
  if (inlined != UINT32_MAX && counters[event] == threshold(graph.tasks[inlined].waits[0], step))
    trigger(graph.tasks[inlined].trigger, step);
}

std::optional<uint32_t> QueueSimulation::advance(uint32_t sm) {
  while (!finished(sm)) {
    const Task &task = headOf(sm);
    uint64_t step = stepOf(sm);
    for (const Wait &wait : task.waits)
      if (counters[wait.event] < threshold(wait, step))
        return wait.event;
    trigger(task.trigger, step);
    ++next[sm];
  }
  return std::nullopt;
}

std::string QueueSimulation::run() {
  for (uint32_t sm = 0; sm < schedule.numSms; ++sm)
    if (!schedule.queues[sm].empty())
      ready.push_back(sm);
  while (!ready.empty()) {
    uint32_t sm = ready.front();
    ready.pop_front();
    if (std::optional<uint32_t> event = advance(sm))
      waiting[*event].push_back(sm);
  }
  for (uint32_t sm = 0; sm < schedule.numSms; ++sm)
    if (!schedule.queues[sm].empty() && !finished(sm))
      return deadlockReport();
  return "";
}

std::string QueueSimulation::deadlockReport() const {
  std::string report = "the schedule deadlocks under in-order execution per SM:";
  int shown = 0;
  for (uint32_t sm = 0; sm < schedule.numSms && shown < 4; ++sm) {
    if (schedule.queues[sm].empty() || finished(sm))
      continue;
    const Task &task = headOf(sm);
    uint64_t step = stepOf(sm);
    for (const Wait &wait : task.waits) {
      if (counters[wait.event] >= threshold(wait, step))
        continue;
      report += cat(shown++ ? ";" : "", " SM ", sm, " is stuck at ", describeTask(graph, task.id),
                    " of step ", step, ", which waits for ", describeEvent(graph, wait.event),
                    " to reach ", threshold(wait, step), " (it is at ", counters[wait.event], ")");
      break;
    }
  }
  return report;
}

} // namespace

std::string checkDeadlockFree(const TaskGraph &graph, const Schedule &schedule) {
  return QueueSimulation(graph, schedule, 2).run();
}

} // namespace mk::validation
