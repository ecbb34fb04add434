#include "runtime/cpu/Launch.h"

#include "runtime/cpu/Tasks.h"

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
         const LaunchPlan &plan, const CpuExecutorOptions &options,
         std::vector<int64_t> &argmaxTokens)
      : graph(graph), schedule(schedule), weights(weights), memory(memory), plan(plan),
        options(options), counters(new std::atomic<uint64_t>[graph.events.size()]) {
    for (size_t event = 0; event < graph.events.size(); ++event)
      counters[event].store(0, std::memory_order_relaxed);
    for (int64_t step = 0; step < plan.steps; ++step) {
      StepInput input{step, plan.firstPosition + step, std::nullopt, &argmaxTokens};
      if (step < static_cast<int64_t>(plan.forcedTokens.size()))
        input.forcedToken = plan.forcedTokens[step];
      inputs.push_back(input);
    }
  }

  std::string run() {
    if (options.threaded)
      runThreaded();
    else
      runSingleThread();
    return firstError;
  }

private:
  bool ready(const Task &task, int64_t step) const {
    for (const Wait &wait : task.waits) {
      uint64_t needed = graph.events[wait.event].triggerCount * uint64_t(step + 1 + wait.stepOffset);
      if (counters[wait.event].load(std::memory_order_acquire) < needed)
        return false;
    }
    return true;
  }

  // Returns false when the task failed (the failure is recorded).
  bool execute(const Task &task, int64_t step) {
    try {
      TaskContext context(graph, task, weights[task.op], memory, inputs[step]);
      runTask(context);
    } catch (const std::exception &error) {
      recordFailure(error.what());
      return false;
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
    for (int64_t step = 0; step < plan.steps; ++step)
      for (uint32_t id : schedule.queues[sm]) {
        const Task &task = graph.tasks[id];
        if (seed)
          perturb(random);
        while (!ready(task, step)) {
          if (failed.load(std::memory_order_relaxed))
            return;
          std::this_thread::yield();
        }
        if (failed.load(std::memory_order_relaxed) || !execute(task, step))
          return;
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
  // order of each round and the number of tasks an SM runs are random.
  void runSingleThread() {
    std::vector<uint64_t> next(schedule.numSms, 0);
    std::vector<uint32_t> order(schedule.numSms);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(options.adversarialSeed);
    auto finished = [&](uint32_t sm) {
      return next[sm] == plan.steps * schedule.queues[sm].size();
    };
    while (true) {
      if (options.adversarialSeed)
        std::shuffle(order.begin(), order.end(), random);
      bool progress = false, allFinished = true;
      for (uint32_t sm : order) {
        uint64_t burst = options.adversarialSeed ? 1 + random() % 3 : 1;
        for (uint64_t i = 0; i < burst && !finished(sm); ++i) {
          const auto &queue = schedule.queues[sm];
          const Task &task = graph.tasks[queue[next[sm] % queue.size()]];
          int64_t step = next[sm] / queue.size();
          if (!ready(task, step))
            break;
          if (!execute(task, step))
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
  std::unique_ptr<std::atomic<uint64_t>[]> counters;
  std::vector<StepInput> inputs;
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string firstError;
};

} // namespace

std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      std::vector<int64_t> &argmaxTokens) {
  return Launch(graph, schedule, weights, memory, plan, options, argmaxTokens).run();
}

} // namespace mk::cpu
