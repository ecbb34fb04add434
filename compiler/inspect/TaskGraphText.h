// The text views of a compiled model that `mkc compile --emit=tasks|schedule`
// and `mkc inspect` print: a summary, the whole graph as a listing, and the
// per-SM queues.
#ifndef MKC_COMPILER_INSPECT_TASKGRAPHTEXT_H
#define MKC_COMPILER_INSPECT_TASKGRAPHTEXT_H

#include "compiler/taskgraph/ChunkDependencies.h"
#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace mk {

// Tasks and events per operation kind and per layer, the dependency report,
// and with a schedule its weight bytes per SM (max and mean, per layer) and
// the simulated time of a step. `dependencies` and `schedule` may be null.
void printSummary(std::ostream &os, const TaskGraph &graph, const TargetDescription &target,
                  const DependencyReport *dependencies, const Schedule *schedule);

// Every buffer, operation, event and task, one per line.
void printTaskListing(std::ostream &os, const TaskGraph &graph);

// Each SM's tasks in the order it runs them, with what they wait on.
void printQueues(std::ostream &os, const TaskGraph &graph, const Schedule &schedule);

// "1.50 MiB", "320 B"
std::string formatBytes(double bytes);

} // namespace mk

#endif
