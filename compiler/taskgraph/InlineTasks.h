// Inline tasks (Task::runsInline): a task that waits on one event of its
// own step runs on the SM whose trigger completes that event, right after
// it, instead of from a queue after a hop. `mkc compile --inline-merge`
// makes each attention merge so: the last of its KV head's chunks to end
// merges them (bench/NOTES.md, the merge in the last chunk). The CPU
// executor runs them where its trigger's fetch-add reaches the count, the
// kernel where its atom.acq_rel does (codegen/device/Interpreter.cuh).
#ifndef MKC_COMPILER_TASKGRAPH_INLINETASKS_H
#define MKC_COMPILER_TASKGRAPH_INLINETASKS_H

#include "core/taskgraph/TaskGraph.h"

namespace mk {

// Marks inline every AttentionMerge task whose waits are one event of its
// own step on its own rank, that no other inline task follows; returns how
// many. Run after the events are final (chunkDependencies, markRankWaits)
// and before scheduling, which leaves inline tasks out of the queues.
uint32_t inlineAttentionMerges(TaskGraph &graph);

} // namespace mk

#endif
