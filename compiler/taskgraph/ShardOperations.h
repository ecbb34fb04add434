// Tensor parallelism, Megatron-style, on a lowered task graph: rank r of N
// keeps its share of every layer's attention heads and MLP channels. The
// qkv and gate_up gemvs keep their rows of q, k, v (its heads) and of gate
// and up (its channels); attention runs on its heads with its KV caches;
// o_proj and down_proj keep their columns and give partial sums, which an
// AllReduce operation adds, in rank order, to the residual on every rank.
// Embedding, the final norm, lm_head and the argmax stay whole on every
// rank, which all compute the same bits and pick the same token.
//
// Every rank's graph has the same tasks, events and buffers, and only its
// weights differ: that is what lets an allRanks wait name an event of every
// rank by one id (TaskGraph.h).
#ifndef MKC_COMPILER_TASKGRAPH_SHARDOPERATIONS_H
#define MKC_COMPILER_TASKGRAPH_SHARDOPERATIONS_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"
#include "core/weights/SlicedValues.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// Rank `rank` of `ranks` of the lowered (tiled) graph `whole`, tiled again,
// its slices appended to `slices`. An error names the operation whose heads
// or channels do not divide by `ranks`.
llvm::Expected<TaskGraph> shardForRank(const TaskGraph &whole, int64_t ranks, int64_t rank,
                                       const TargetDescription &target,
                                       std::vector<WeightSlice> &slices);

// After chunkDependencies: the waits that cross ranks become allRanks waits,
// an AllReduce's on the tiles writing the partial sums it reads, and the
// next step's on the Argmax (so that no rank overwrites partial sums another
// still reads).
void markRankWaits(TaskGraph &graph);

} // namespace mk

#endif
