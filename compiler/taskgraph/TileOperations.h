// From operations to tasks: cuts every operation of a task graph into
// SM-sized tasks and joins them with the simplest correct events, one per
// operation (attention: one per phase), which chunkDependencies() refines.
#ifndef MKC_COMPILER_TASKGRAPH_TILEOPERATIONS_H
#define MKC_COMPILER_TASKGRAPH_TILEOPERATIONS_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"

#include <cstdint>

namespace mk {

// The chunks of each KV head that one round of chunk tasks over the SMs
// runs at once: numSms / numKvHeads, at least one. An attention operation's
// chunksPerRound is this, at most its numChunks.
int64_t attentionChunksPerRound(int64_t numKvHeads, uint32_t numSms);

// Positions per AttentionChunk task, a power of two: the context cut into
// at most numSms / numKvHeads chunks per KV head (at least one), so that one
// layer's chunk tasks fill the SMs once (132 SMs, 8 KV heads, context 512:
// 16 chunks of 32), kept within [16, longestChunk] positions (a power of
// two, 2048 by default, TargetDescription) and at most 64 chunks per KV head
// (past 64 x longestChunk positions that bound wins: chunks grow).
int64_t attentionChunkSize(int64_t maxContext, int64_t numKvHeads, uint32_t numSms,
                           uint64_t longestChunk = 2048);

// An attention operation's chunkSize, numChunks (covering maxContext) and
// chunksPerRound, from its numKvHeads and the target.
void cutAttentionIntoChunks(Operation &op, int64_t maxContext, const TargetDescription &target);

// Fills graph.tasks and graph.events from graph.buffers and graph.operations
// (in program order; attention ops with chunkSize and numChunks set). Each
// task waits on the events of the operations that produce what it reads;
// Embed waits on the previous step's Argmax.
void tileOperations(TaskGraph &graph, const TargetDescription &target);

} // namespace mk

#endif
