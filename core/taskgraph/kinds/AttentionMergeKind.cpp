// AttentionMerge: elements [begin, end) of the attention's output
// ([numHeads][headDim]; core/protocol/AttentionLayout.h says how they are
// cut). Combines the chunks' partials of each element's q head, in chunk
// order, into the output, row by row.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  AttentionLayout layout = attentionLayout(op);
  TaskFootprint footprint;
  // Every chunk's partials of the q heads it takes a part of.
  const uint64_t firstHead = task.begin / layout.headDim, lastHead = (task.end - 1) / layout.headDim;
  addRowRanges(footprint.reads, graph, op.partials, layout.partial(firstHead, 0),
               (lastHead + 1 - firstHead) * layout.numChunks * layout.partialLength());
  addRowRanges(footprint.writes, graph, op.output, task.begin, task.end - task.begin);
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
    .describeTile = describeHeadElements,
    .checkTile = checkHeadElements,
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
