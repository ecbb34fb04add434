// Questions about a task graph that its consumers share: who waits on whom
// within a step, and how long the longest dependency chain is. Plain data in,
// plain data out (no MLIR), so the runtime can reuse it.
#ifndef MKC_COMPILER_TASKGRAPH_TASKGRAPHANALYSIS_H
#define MKC_COMPILER_TASKGRAPH_TASKGRAPHANALYSIS_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <vector>

namespace mk {

// For every task, the tasks that trigger an event it waits on with step
// offset 0, ascending and without repeats. Waits on the previous step are
// left out: within one step they order nothing.
std::vector<std::vector<uint32_t>> sameStepPredecessors(const TaskGraph &graph);

// For every event, the tasks that trigger it, ascending.
std::vector<std::vector<uint32_t>> eventTriggers(const TaskGraph &graph);

// A task whose writes overlap what another task reads: in the same step when
// it comes first in the task order, else in the previous step (the token).
struct Producer {
  uint32_t task = 0;
  int32_t stepOffset = 0;
};

// For every task, the producers of what it reads, derived from the reads and
// writes alone (not from the events): what its waits must cover. Ascending
// by task, without repeats.
std::vector<std::vector<Producer>> producersOfReads(const TaskGraph &graph);

struct DependencyStats {
  uint64_t events = 0;
  uint64_t waits = 0;
  // Sum over all waits of the waited event's trigger count: how many producer
  // tasks the consumers wait for, the quantity finer events reduce.
  uint64_t waitedTasks = 0;
  uint64_t criticalPathTasks = 0; // tasks on the longest chain of one step
  uint64_t criticalPathBytes = 0; // weight bytes on the heaviest chain of one step
};

// Assumes the graph's task order is topological (TaskGraph::tasks says so).
DependencyStats dependencyStats(const TaskGraph &graph);

} // namespace mk

#endif
