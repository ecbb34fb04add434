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
  Launch(const std::vector<RankProgram> &ranks, const LaunchPlan &plan,
         const CpuExecutorOptions &options, LaunchRecord &record)
      : ranks(ranks), plan(plan), options(options), record(record),
        stepEnds(plan.steps, 0) {
    const TaskGraph &graph = *ranks[0].graph;
    for (const RankProgram &rank : ranks) {
      counters.emplace_back(new std::atomic<uint64_t>[graph.events.size()]);
      for (size_t event = 0; event < graph.events.size(); ++event)
        counters.back()[event].store(0, std::memory_order_relaxed);
      memories.push_back(rank.memory);
      inlineOf.emplace_back(rank.graph->events.size(), kNone);
      for (const Task &task : rank.graph->tasks)
        if (task.runsInline)
          inlineOf.back()[task.waits[0].event] = task.id;
    }
    uint64_t rows = plan.rows.size();
    record.argmaxTokens.assign(plan.steps * rows, -1);
    record.rowStops.assign(rows, {});
    rankTokens.assign(ranks.size(), std::vector<int64_t>(plan.steps * rows, -1));
    lastStep.store(plan.steps - 1, std::memory_order_relaxed);
    for (const Task &task : graph.tasks)
      if (task.kind == TaskKind::Argmax) {
        hasArgmax = true;
        argmaxEvent = task.trigger;
        argmaxTriggers = graph.events[task.trigger].triggerCount;
      }
    record.trace.assign(options.trace ? plan.steps * graph.tasks.size() * MK_TRACE_TIMES : 0, 0);
    inputs.resize(ranks.size());
    for (size_t rank = 0; rank < ranks.size(); ++rank)
      for (int64_t step = 0; step < plan.steps; ++step) {
        std::vector<int64_t> *tokens = rank == 0 ? &record.argmaxTokens : &rankTokens[rank];
        StepInput input{step, plan.firstStamp + step, {}, tokens, &plan.choice};
        for (const RowPlan &row : plan.rows) {
          StepRow fed{row.sequence, row.firstPosition + step * row.positionsPerStep,
                      std::nullopt, step < row.steps};
          if (step < static_cast<int64_t>(row.forcedTokens.size()))
            fed.forcedToken = row.forcedTokens[step];
          input.rows.push_back(fed);
        }
        inputs[rank].push_back(std::move(input));
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
    if (firstError.empty())
      checkRanksAgree();
    return firstError;
  }

private:
  // Every rank computes the whole logits from the same bits: a rank that
  // picked another token has computed something else.
  void checkRanksAgree() {
    uint64_t picks = record.stepsDone * plan.rows.size();
    for (size_t rank = 1; rank < ranks.size(); ++rank)
      for (uint64_t i = 0; i < picks; ++i)
        if (rankTokens[rank][i] != record.argmaxTokens[i]) {
          firstError = "rank " + std::to_string(rank) + " picked token " +
                       std::to_string(rankTokens[rank][i]) + " at step " +
                       std::to_string(i / plan.rows.size()) + ", rank 0 token " +
                       std::to_string(record.argmaxTokens[i]) +
                       ": the ranks' logits differ, which the AllReduce's order rules out";
          return;
        }
  }

  // Whether step `step`'s Argmax has completed (its end decided) on rank 0,
  // which decides for all. A launch that cannot stop early needs no such
  // barrier between steps (the graph's waits order them), and runs without
  // it, so that a missing wait still shows in checked mode.
  bool stepFinished(int64_t step) const {
    bool canStop = !plan.eosTokens.empty() || plan.onToken || plan.keepLogits;
    return !canStop || !hasArgmax || counters[0][argmaxEvent].load(std::memory_order_acquire) >=
           mk_event_threshold(argmaxTriggers, step, 0);
  }

  // After a step's Argmax on rank 0: the tokens fed next go into the
  // contexts, and which rows stop (and whether the launch ends here) is
  // decided before the step's event lets any task of the next step start.
  void endStep(int64_t step) {
    if (plan.keepLogits) {
      std::span<const float> logits = memories[0]->values(ranks[0].graph->logitsBuffer);
      record.logits.emplace_back(logits.begin(), logits.end());
    }
    bool anyGoesOn = false;
    for (size_t r = 0; r < plan.rows.size(); ++r) {
      const RowPlan &row = plan.rows[r];
      const StepRow &fed = inputs[0][step].rows[r];
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
        for (auto &rankInputs : inputs)
          for (int64_t later = step + 1; later < plan.steps; ++later)
            rankInputs[later].rows[r].active = false;
      }
      anyGoesOn = anyGoesOn || (step + 1 < plan.steps && inputs[0][step + 1].rows[r].active);
    }
    if (!anyGoesOn)
      lastStep.store(step, std::memory_order_relaxed);
    stepsDone.store(step + 1, std::memory_order_relaxed);
  }

  bool ready(size_t rank, const Task &task, int64_t step) const {
    const TaskGraph &graph = *ranks[rank].graph;
    for (const Wait &wait : task.waits) {
      uint64_t needed =
          mk_event_threshold(graph.events[wait.event].triggerCount, step, wait.stepOffset);
      if (!wait.allRanks) {
        if (counters[rank][wait.event].load(std::memory_order_acquire) < needed)
          return false;
        continue;
      }
      for (const auto &rankCounters : counters)
        if (rankCounters[wait.event].load(std::memory_order_acquire) < needed)
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
  // a trace (or on a rank but 0). Each (step, task) is run by one SM, so no
  // two threads share one.
  uint64_t *traceTimes(size_t rank, uint32_t id, int64_t step) {
    if (record.trace.empty() || rank != 0)
      return nullptr;
    return &record.trace[(step * ranks[0].graph->tasks.size() + id) * MK_TRACE_TIMES];
  }

  void mark(uint64_t *times, int which) const {
    if (times)
      times[which] = now();
  }

  // Returns false when the task failed (the failure is recorded).
  bool execute(size_t rank, const Task &task, int64_t step, uint64_t *times) {
    const RankProgram &program = ranks[rank];
    try {
      TaskContext context(*program.graph, task, (*program.weights)[task.op], *program.memory,
                          inputs[rank][step], ranks.size() > 1 ? &memories : nullptr);
      runTask(context);
    } catch (const std::exception &error) {
      recordFailure(ranks.size() > 1 ? "rank " + std::to_string(rank) + ": " + error.what()
                                     : std::string(error.what()));
      return false;
    }
    mark(times, MK_TRACE_END);
    if (task.kind == TaskKind::Argmax && rank == 0) {
      stepEnds[step] = now();
      try {
        endStep(step);
      } catch (const std::exception &error) { // the host's callback
        recordFailure(error.what());
        return false;
      }
    }
    // Acquire too: the trigger that completes the step's count runs the
    // event's inline task here, reading what the other triggers released.
    uint64_t count = counters[rank][task.trigger].fetch_add(1, std::memory_order_acq_rel) + 1;
    uint32_t inlined = inlineOf[rank][task.trigger];
    if (inlined != kNone) {
      const TaskGraph &graph = *ranks[rank].graph;
      if (count == mk_event_threshold(graph.events[task.trigger].triggerCount, step, 0)) {
        uint64_t *inlineTimes = traceTimes(rank, inlined, step);
        mark(inlineTimes, MK_TRACE_WAIT);
        mark(inlineTimes, MK_TRACE_START);
        return execute(rank, graph.tasks[inlined], step, inlineTimes);
      }
    }
    return true;
  }

  void recordFailure(const std::string &message) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (firstError.empty())
      firstError = message;
    failed.store(true, std::memory_order_relaxed);
  }

  // One emulated SM: a queue of one rank.
  struct Unit {
    size_t rank;
    uint32_t sm;
  };

  std::vector<Unit> units() const {
    std::vector<Unit> all;
    for (size_t rank = 0; rank < ranks.size(); ++rank)
      for (uint32_t sm = 0; sm < ranks[rank].schedule->numSms; ++sm)
        all.push_back({rank, sm});
    return all;
  }

  void runQueue(Unit unit, uint64_t seed) {
    std::mt19937_64 random(seed);
    if (seed)
      perturb(random);
    const TaskGraph &graph = *ranks[unit.rank].graph;
    const std::vector<uint32_t> &queue = ranks[unit.rank].schedule->queues[unit.sm];
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
      for (uint32_t id : queue) {
        const Task &task = graph.tasks[id];
        if (seed)
          perturb(random);
        uint64_t *times = traceTimes(unit.rank, id, step);
        mark(times, MK_TRACE_WAIT);
        while (!ready(unit.rank, task, step)) {
          if (failed.load(std::memory_order_relaxed))
            return;
          std::this_thread::yield();
        }
        mark(times, MK_TRACE_START);
        if (failed.load(std::memory_order_relaxed) || !execute(unit.rank, task, step, times))
          return;
      }
    }
  }

  void runThreaded() {
    std::vector<Unit> order = units();
    std::mt19937_64 random(options.adversarialSeed);
    if (options.adversarialSeed)
      std::shuffle(order.begin(), order.end(), random);
    std::vector<std::thread> threads;
    try {
      for (Unit unit : order) {
        uint64_t seed = options.adversarialSeed ? random() | 1 : 0;
        threads.emplace_back([this, unit, seed] { runQueue(unit, seed); });
      }
    } catch (const std::system_error &error) {
      recordFailure(std::string("could not start one thread per SM: ") + error.what());
    }
    for (std::thread &thread : threads)
      thread.join();
  }

  // Round-robin over the SMs (of every rank), one task each per round; with
  // a seed, the SM order of each round and the number of tasks an SM runs
  // are random. An SM's wait for a task begins the first round it finds the
  // task not ready.
  void runSingleThread() {
    std::vector<Unit> all = units();
    std::vector<uint64_t> next(all.size(), 0);
    std::vector<bool> waiting(all.size(), false);
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(options.adversarialSeed);
    auto queueOf = [&](size_t index) -> const std::vector<uint32_t> & {
      return ranks[all[index].rank].schedule->queues[all[index].sm];
    };
    auto finished = [&](size_t index) {
      int64_t steps = lastStep.load(std::memory_order_relaxed) + 1;
      return next[index] >= steps * queueOf(index).size();
    };
    while (true) {
      if (options.adversarialSeed)
        std::shuffle(order.begin(), order.end(), random);
      bool progress = false, allFinished = true;
      for (size_t index : order) {
        size_t rank = all[index].rank;
        uint64_t burst = options.adversarialSeed ? 1 + random() % 3 : 1;
        for (uint64_t i = 0; i < burst && !finished(index); ++i) {
          const auto &queue = queueOf(index);
          uint32_t id = queue[next[index] % queue.size()];
          const Task &task = ranks[rank].graph->tasks[id];
          int64_t step = next[index] / queue.size();
          uint64_t *times = traceTimes(rank, id, step);
          if (!waiting[index])
            mark(times, MK_TRACE_WAIT);
          waiting[index] = true;
          bool stepStarts = next[index] % queue.size() == 0;
          if ((stepStarts && step > 0 && !stepFinished(step - 1)) || !ready(rank, task, step))
            break;
          if (finished(index))
            break;
          waiting[index] = false;
          mark(times, MK_TRACE_START);
          if (!execute(rank, task, step, times))
            return;
          ++next[index];
          progress = true;
        }
        allFinished = allFinished && finished(index);
      }
      if (allFinished)
        return;
      if (!progress) {
        recordFailure("the schedule deadlocked, which validation should have ruled out");
        return;
      }
    }
  }

  const std::vector<RankProgram> &ranks;
  const LaunchPlan &plan;
  const CpuExecutorOptions &options;
  LaunchRecord &record;
  std::vector<std::unique_ptr<std::atomic<uint64_t>[]>> counters; // per rank
  std::vector<ExecutorMemory *> memories;                         // per rank
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<std::vector<uint32_t>> inlineOf; // per rank and event: its inline task, or kNone
  std::vector<std::vector<int64_t>> rankTokens; // the picks of ranks but 0, as record's
  std::vector<uint64_t> stepEnds; // ns since the start as each step's Argmax ends; 0: not yet
  Clock::time_point start;
  std::vector<std::vector<StepInput>> inputs; // per rank, per step
  std::atomic<bool> failed{false};
  bool hasArgmax = false;
  uint32_t argmaxEvent = 0, argmaxTriggers = 1;
  std::atomic<int64_t> lastStep{0};  // the launch's last step, earlier once it stops
  std::atomic<int64_t> stepsDone{0};
  std::mutex errorMutex;
  std::string firstError;
};

} // namespace

std::string runLaunch(const std::vector<RankProgram> &ranks, const LaunchPlan &plan,
                      const CpuExecutorOptions &options, LaunchRecord &record) {
  record = LaunchRecord{};
  return Launch(ranks, plan, options, record).run();
}

std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      LaunchRecord &record) {
  return runLaunch({{&graph, &schedule, &weights, &memory}}, plan, options, record);
}

} // namespace mk::cpu
