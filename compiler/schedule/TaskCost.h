// The cost model the scheduler and the schedule simulation share: how long
// one task keeps one SM busy, estimated from the bytes it streams.
#ifndef MKC_COMPILER_SCHEDULE_TASKCOST_H
#define MKC_COMPILER_SCHEDULE_TASKCOST_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"

#include <cstdint>

namespace mk {

// Bytes a task streams from memory: its weights, the activations it reads,
// and for an attention chunk a full chunk of keys and values (the cost late
// in the context, which is when it matters).
uint64_t taskStreamedBytes(const TaskGraph &graph, const Task &task);

// Seconds on one SM: the streamed bytes at the SM's share of the memory
// bandwidth, plus a fixed cost for waiting on and signalling events.
double taskSeconds(const TaskGraph &graph, const Task &task, const TargetDescription &target);

} // namespace mk

#endif
