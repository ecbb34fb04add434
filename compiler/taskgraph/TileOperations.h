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

// Positions per AttentionChunk task: the context cut evenly into the chunks
// of one round of tasks over the SMs (numSms / numKvHeads per KV head, at
// most 64), rounded up to the span grain (16) and at least 16 positions, so
// that every step of the build takes one round (132 SMs, 8 KV heads: 16
// chunks of 32 for a context of 512, of 2064 for 32800). Where that would
// pass longestChunk, as few chunks as longestChunk allows, evened out, at
// most 64 per KV head (past 64 x longestChunk positions chunks grow).
int64_t attentionChunkSize(int64_t maxContext, int64_t numKvHeads, uint32_t numSms,
                           uint64_t longestChunk = 4096);

// The longest chunk for a group of q heads per KV head: the target's, or
// less where the group's scores (group x chunk floats) would pass 64 KiB of
// shared memory (group 8: 2048 positions).
int64_t longestAttentionChunkFor(int64_t group, uint64_t longestChunk);

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
