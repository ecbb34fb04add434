// One launch: a number of consecutive steps run over the schedule's queues
// with event counters that start at zero and only grow, as one launch of the
// persistent kernel. Waits follow TaskGraph.h: a task of step t waiting on
// event e with offset o may start once counter[e] >= triggerCount[e] *
// (t + 1 + o).
#ifndef MKC_RUNTIME_CPU_LAUNCH_H
#define MKC_RUNTIME_CPU_LAUNCH_H

#include "core/taskgraph/TaskGraph.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/TaskContext.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mk::cpu {

struct LaunchPlan {
  int64_t firstPosition = 0;
  int64_t steps = 0;
  std::vector<int64_t> forcedTokens; // the tokens of the first steps
  // How tokens are picked; `choice.contextTokens`, when set, holds the
  // context by position, which the launch extends with each token it feeds.
  TokenChoice choice;
  // The launch ends after a step whose token is one of these, from step
  // eosFromStep on, or for which onToken answers true (the host's stop), as
  // every CTA of the kernel ends after the step whose argmax set the stop
  // flag. onToken is called once per step, in order, on whichever thread ran
  // the step's Argmax, before any task of the next step starts.
  std::vector<int64_t> eosTokens;
  int64_t eosFromStep = INT64_MAX;
  std::function<bool(int64_t step, int64_t token)> onToken;
};

// What a launch reports besides what it wrote to memory.
struct LaunchRecord {
  std::vector<int64_t> argmaxTokens; // per step
  int64_t stepsDone = 0;             // steps whose Argmax completed
  bool stoppedAtEos = false, stoppedByHost = false;
  // Per step, from the previous step's Argmax (step 0: the launch's start)
  // to the end of its own, by steady_clock.
  std::vector<double> stepMilliseconds;
  // With options.trace: [steps][tasks][kTraceTimes] nanoseconds from the
  // launch's start, as the GPU's trace (ControlBlock.h's MkTraceTime); a task
  // that did not run keeps its zeros.
  std::vector<uint64_t> trace;
};

// Returns "" or the first task failure; `record` is filled either way.
std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      LaunchRecord &record);

} // namespace mk::cpu

#endif
