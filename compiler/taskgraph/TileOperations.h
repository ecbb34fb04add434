// From operations to tasks: cuts every operation of a task graph into
// SM-sized tasks and joins them with the simplest correct events, one per
// operation (attention: one per phase), which chunkDependencies() refines.
#ifndef MKC_COMPILER_TASKGRAPH_TILEOPERATIONS_H
#define MKC_COMPILER_TASKGRAPH_TILEOPERATIONS_H

#include "compiler/taskgraph/Target.h"
#include "compiler/taskgraph/TaskGraph.h"

#include <cstdint>

namespace mk {

// Positions per AttentionChunk task: 256, or less for short contexts so that
// there are still about four chunks to run side by side.
int64_t attentionChunkSize(int64_t maxContext);

// Fills graph.tasks and graph.events from graph.buffers and graph.operations
// (in program order; attention ops with chunkSize and numChunks set). Each
// task waits on the events of the operations that produce what it reads;
// Embed waits on the previous step's Argmax.
void tileOperations(TaskGraph &graph, const TargetDescription &target);

} // namespace mk

#endif
