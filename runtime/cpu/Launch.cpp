#include "runtime/cpu/Launch.h"

#include "core/protocol/EventProtocol.h"
#include "runtime/cpu/Tasks.h"
#include "runtime/format/ControlBlock.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <system_error>
#include <thread>

namespace mk::cpu {

namespace {

// Timing noise before a task: enough sleeps and yields that a task missing
// a wait soon runs before its producer.
void perturb(std::mt19937_64 &random) {
  switch (random() % 8) {
  case 0:
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 200));
    break;
  case 1:
  case 2:
    for (uint64_t i = 0, n = 1 + random() % 4; i < n; ++i)
      std::this_thread::yield();
    break;
  default:
    break;
  }
}

class Launch {
public:
  Launch(const TaskGraph &graph, const Schedule &schedule,
         const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
         const LaunchPlan &plan, const CpuExecutorOptions &options, LaunchRecord &record)
      : graph(graph), schedule(schedule), weights(weights), memory(memory), plan(plan),
        options(options), record(record), counters(new std::atomic<uint64_t>[graph.events.size()]),
        stepEnds(plan.steps, 0) {
    for (size_t event = 0; event < graph.events.size(); ++event)
      counters[event].store(0, std::memory_order_relaxed);
    uint64_t rows = plan.rows.size();
    record.argmaxTokens.assign(plan.steps * rows, -1);
    record.rowStops.assign(rows, {});
    lastStep.store(plan.steps - 1, std::memory_order_relaxed);
    for (const Task &task : graph.tasks)
      if (task.kind == TaskKind::Argmax) {
        hasArgmax = true;
        argmaxEvent = task.trigger;
        argmaxTriggers = graph.events[task.trigger].triggerCount;
      }
    record.trace.assign(options.trace ? plan.steps * graph.tasks.size() * MK_TRACE_TIMES : 0, 0);
    for (int64_t step = 0; step < plan.steps; ++step) {
      StepInput input{step, plan.firstStamp + step, {}, &record.argmaxTokens, &plan.choice};
      for (const RowPlan &row : plan.rows) {
        StepRow fed{row.sequence, row.firstPosition + step * row.positionsPerStep, std::nullopt,
                    step < row.steps};
        if (step < static_cast<int64_t>(row.forcedTokens.size()))
          fed.forcedToken = row.forcedTokens[step];
        input.rows.push_back(fed);
      }
      inputs.push_back(std::move(input));
    }
  }

  std::string run() {
    start = Clock::now();
    if (options.threaded)
      runThreaded();
    else
      runSingleThread();
    record.stepsDone = stepsDone.load();
    // Steps the launch did not finish get no time.
    for (int64_t step = 0; step < plan.steps && stepEnds[step] != 0; ++step) {
      uint64_t begin = step > 0 ? stepEnds[step - 1] : 0;
      record.stepMilliseconds.push_back(static_cast<double>(stepEnds[step] - begin) * 1e-6);
    }
    return firstError;
  }

private:
  // Whether step `step`'s Argmax has completed (its end decided). A launch
  // that cannot stop early needs no such barrier between steps (the graph's
  // waits order them), and runs without it, so that a missing wait still
  // shows in checked mode.
  bool stepFinished(int64_t step) const {
    bool canStop = !plan.eosTokens.empty() || plan.onToken || plan.keepLogits;
    return !canStop || !hasArgmax || counters[argmaxEvent].load(std::memory_order_acquire) >=
           mk_event_threshold(argmaxTriggers, step, 0);
  }

  // After a step's Argmax: the tokens fed next go into the contexts, and
  // which rows stop (and whether the launch ends here) is decided before
  // the step's event lets any task of the next step start.
  void endStep(int64_t step) {
    if (plan.keepLogits) {
      std::span<const float> logits = memory.values(graph.logitsBuffer);
      record.logits.emplace_back(logits.begin(), logits.end());
    }
    bool anyGoesOn = false;
    for (size_t r = 0; r < plan.rows.size(); ++r) {
      const RowPlan &row = plan.rows[r];
      const StepRow &fed = inputs[step].rows[r];
      if (!fed.active)
        continue;
      int64_t token = record.argmaxTokens[step * plan.rows.size() + r];
      std::vector<std::vector<int64_t>> *contexts = plan.choice.contextTokens;
      int64_t next = fed.position + row.positionsPerStep;
      if (contexts && step + 1 >= static_cast<int64_t>(row.forcedTokens.size())) {
        std::vector<int64_t> &context = (*contexts)[row.sequence];
        if (next < static_cast<int64_t>(context.size()))
          context[next] = token;
      }
      bool eos = step >= row.eosFromStep &&
                 std::find(plan.eosTokens.begin(), plan.eosTokens.end(), token) !=
                     plan.eosTokens.end();
      bool host = plan.onToken && plan.onToken(step, r, token);
      if (eos || host) {
        record.rowStops[r] = {eos, host && !eos};
        for (int64_t later = step + 1; later < plan.steps; ++later)
          inputs[later].rows[r].active = false;
      }
      anyGoesOn = anyGoesOn || (step + 1 < plan.steps && inputs[step + 1].rows[r].active);
    }
    if (!anyGoesOn)
      lastStep.store(step, std::memory_order_relaxed);
    stepsDone.store(step + 1, std::memory_order_relaxed);
  }

  bool ready(const Task &task, int64_t step) const {
    for (const Wait &wait : task.waits) {
      uint64_t needed =
          mk_event_threshold(graph.events[wait.event].triggerCount, step, wait.stepOffset);
      if (counters[wait.event].load(std::memory_order_acquire) < needed)
        return false;
    }
    return true;
  }

  using Clock = std::chrono::steady_clock;

  // Nanoseconds since the launch's start; at least 1, so that 0 keeps
  // meaning "did not happen".
  uint64_t now() const {
    auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start);
    return std::max<uint64_t>(elapsed.count(), 1);
  }

  // Where this step's run of task `id` keeps its times, or nullptr without
  // a trace. Each (step, task) is run by one SM, so no two threads share one.
  uint64_t *traceTimes(uint32_t id, int64_t step) {
    if (record.trace.empty())
      return nullptr;
    return &record.trace[(step * graph.tasks.size() + id) * MK_TRACE_TIMES];
  }

  void mark(uint64_t *times, int which) const {
    if (times)
      times[which] = now();
  }

  // Returns false when the task failed (the failure is recorded).
  bool execute(const Task &task, int64_t step, uint64_t *times) {
    try {
      TaskContext context(graph, task, weights[task.op], memory, inputs[step]);
      runTask(context);
    } catch (const std::exception &error) {
      recordFailure(error.what());
      return false;
    }
    mark(times, MK_TRACE_END);
    if (task.kind == TaskKind::Argmax) {
      stepEnds[step] = now();
      try {
        endStep(step);
      } catch (const std::exception &error) { // the host's callback
        recordFailure(error.what());
        return false;
      }
    }
    counters[task.trigger].fetch_add(1, std::memory_order_release);
    return true;
  }

  void recordFailure(const std::string &message) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (firstError.empty())
      firstError = message;
    failed.store(true, std::memory_order_relaxed);
  }

  void runQueue(uint32_t sm, uint64_t seed) {
    std::mt19937_64 random(seed);
    if (seed)
      perturb(random);
    for (int64_t step = 0; step < plan.steps; ++step) {
      // As the kernel's controller at a step's end: the next step starts
      // once this one's Argmax has decided whether the launch goes on.
      while (step > 0 && !stepFinished(step - 1)) {
        if (failed.load(std::memory_order_relaxed))
          return;
        std::this_thread::yield();
      }
      if (step > lastStep.load(std::memory_order_relaxed))
        return;
      for (uint32_t id : schedule.queues[sm]) {
        const Task &task = graph.tasks[id];
        if (seed)
          perturb(random);
        uint64_t *times = traceTimes(id, step);
        mark(times, MK_TRACE_WAIT);
        while (!ready(task, step)) {
          if (failed.load(std::memory_order_relaxed))
            return;
          std::this_thread::yield();
        }
        mark(times, MK_TRACE_START);
        if (failed.load(std::memory_order_relaxed) || !execute(task, step, times))
          return;
      }
    }
  }

  void runThreaded() {
    std::vector<uint32_t> order(schedule.numSms);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(options.adversarialSeed);
    if (options.adversarialSeed)
      std::shuffle(order.begin(), order.end(), random);
    std::vector<std::thread> threads;
    try {
      for (uint32_t sm : order) {
        uint64_t seed = options.adversarialSeed ? random() | 1 : 0;
        threads.emplace_back([this, sm, seed] { runQueue(sm, seed); });
      }
    } catch (const std::system_error &error) {
      recordFailure(std::string("could not start one thread per SM: ") + error.what());
    }
    for (std::thread &thread : threads)
      thread.join();
  }

  // Round-robin over the SMs, one task each per round; with a seed, the SM
  // order of each round and the number of tasks an SM runs are random. An
  // SM's wait for a task begins the first round it finds the task not ready.
  void runSingleThread() {
    std::vector<uint64_t> next(schedule.numSms, 0);
    std::vector<bool> waiting(schedule.numSms, false);
    std::vector<uint32_t> order(schedule.numSms);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(options.adversarialSeed);
    auto finished = [&](uint32_t sm) {
      int64_t steps = lastStep.load(std::memory_order_relaxed) + 1;
      return next[sm] >= steps * schedule.queues[sm].size();
    };
    while (true) {
      if (options.adversarialSeed)
        std::shuffle(order.begin(), order.end(), random);
      bool progress = false, allFinished = true;
      for (uint32_t sm : order) {
        uint64_t burst = options.adversarialSeed ? 1 + random() % 3 : 1;
        for (uint64_t i = 0; i < burst && !finished(sm); ++i) {
          const auto &queue = schedule.queues[sm];
          uint32_t id = queue[next[sm] % queue.size()];
          const Task &task = graph.tasks[id];
          int64_t step = next[sm] / queue.size();
          uint64_t *times = traceTimes(id, step);
          if (!waiting[sm])
            mark(times, MK_TRACE_WAIT);
          waiting[sm] = true;
          bool stepStarts = next[sm] % queue.size() == 0;
          if ((stepStarts && step > 0 && !stepFinished(step - 1)) || !ready(task, step))
            break;
          if (finished(sm))
            break;
          waiting[sm] = false;
          mark(times, MK_TRACE_START);
          if (!execute(task, step, times))
            return;
          ++next[sm];
          progress = true;
        }
        allFinished = allFinished && finished(sm);
      }
      if (allFinished)
        return;
      if (!progress) {
        recordFailure("the schedule deadlocked, which validation should have ruled out");
        return;
      }
    }
  }

  const TaskGraph &graph;
  const Schedule &schedule;
  const std::vector<BoundOperation> &weights;
  ExecutorMemory &memory;
  const LaunchPlan &plan;
  const CpuExecutorOptions &options;
  LaunchRecord &record;
  std::unique_ptr<std::atomic<uint64_t>[]> counters;
  std::vector<uint64_t> stepEnds; // ns since the start as each step's Argmax ends; 0: not yet
  Clock::time_point start;
  std::vector<StepInput> inputs;
  std::atomic<bool> failed{false};
  bool hasArgmax = false;
  uint32_t argmaxEvent = 0, argmaxTriggers = 1;
  std::atomic<int64_t> lastStep{0};  // the launch's last step, earlier once it stops
  std::atomic<int64_t> stepsDone{0};
  std::mutex errorMutex;
  std::string firstError;
};

} // namespace

std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      LaunchRecord &record) {
  record = LaunchRecord{};
  return Launch(graph, schedule, weights, memory, plan, options, record).run();
}

} // namespace mk::cpu
