// The static schedule: which SM runs which tasks, in which order, every step.
//
// List scheduling: tasks are taken in the order they become ready (all their
// same-step producers placed; earliest ready time first, then the longest
// remaining path; of an operation's tiles whose work follows the step's
// position, attention chunks, the lowest rank first: TaskKindDescription::
// positionRank), and each is appended to the SM where it can start
// earliest, preferring, among SMs that can start it about as early, the one
// that has streamed the fewest weight bytes in the task's layer. Because
// every task is appended after all its producers, each SM's queue follows
// one global topological order, so in-order execution per SM cannot
// deadlock (the task earliest in that order among the SMs' current heads
// always has all its producers done). Deterministic: no clocks, no hashing.
#ifndef MKC_COMPILER_SCHEDULE_SCHEDULER_H
#define MKC_COMPILER_SCHEDULE_SCHEDULER_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"

namespace mk {

Schedule scheduleTasks(const TaskGraph &graph, const TargetDescription &target);

} // namespace mk

#endif
