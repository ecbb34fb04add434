// One launch: a number of consecutive steps run over the schedule's queues
// with event counters that start at zero and only grow, as one launch of the
// persistent kernel. Waits follow TaskGraph.h: a task of step t waiting on
// event e with offset o may start once counter[e] >= triggerCount[e] *
// (t + 1 + o).
#ifndef MKC_RUNTIME_CPU_LAUNCH_H
#define MKC_RUNTIME_CPU_LAUNCH_H

#include "compiler/taskgraph/TaskGraph.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/TaskContext.h"

#include <string>
#include <vector>

namespace mk::cpu {

struct LaunchPlan {
  int64_t firstPosition = 0;
  int64_t steps = 0;
  std::vector<int64_t> forcedTokens; // the tokens of the first steps
};

// Returns "" or the first task failure. `argmaxTokens` gets each step's
// Argmax result.
std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      std::vector<int64_t> &argmaxTokens);

} // namespace mk::cpu

#endif
