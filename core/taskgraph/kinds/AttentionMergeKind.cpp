// AttentionMerge: KV head `begin`. Combines the chunks' partials of each of
// its q heads, in chunk order, into the attention's output, row by row.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  AttentionLayout layout = attentionLayout(op);
  TaskFootprint footprint;
  addRowRanges(footprint.reads, graph, op.partials, layout.groupPartials(task.begin),
               layout.groupPartialsLength());
  addRowRanges(footprint.writes, graph, op.output, layout.query(task.begin), layout.groupLength());
  return footprint;
}

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {op.headDim, op.numHeads / op.numKvHeads, graph.rows};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return attentionMergeSharedFloats(v[0], v[1]);
}

} // namespace

extern const TaskKindDescription kAttentionMergeKind = {
    .kind = TaskKind::AttentionMerge,
    .name = "AttentionMerge",
    .operation = OpKind::Attention,
    .phaseEvent = nullptr,
    .describeTile = describeKvHead,
    .checkTile = checkKvHead,
    .footprint = footprint,
    .weightElements = noElements,
    .cacheElements = noElements,
    .deviceFunction = "attentionMergeTask",
    .variantParameters = {{"headDim"}, {"group"}, {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::attentionMergeSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
