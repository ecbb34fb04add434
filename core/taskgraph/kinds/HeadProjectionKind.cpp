// HeadProjection: rows [r0, r1) of a Gemv's weight, restricted to the
// columns of one q head h, times that head's attention output merged from
// its chunks' partials, added into the Fixed64 output:
//   out[r] += W[r, h * headDim : (h + 1) * headDim] . merge_h   (r0 <= r < r1)
// A Gemv projecting by head (projectsByHead: o_proj with --o-proj-by-head)
// is cut into these tiles only, head by head, so the attention needs no
// merge phase and each chunk's partials are read by its head's tiles alone
// (where a Gemv merging every head, --merge-in-o-proj, read them all in
// every tile). The output's seed (the residual) is written before by the
// producer of the residual (Operation::seed); whoever reads the output
// waits on every tile.
//
// The tile: `begin` is h << MK_HEAD_TILE_ROW_BITS | r0 and `end` the same
// with r1 (core/protocol/AttentionLayout.h), so that a task names its head
// and its rows without its operation.
#include "core/protocol/AttentionLayout.h"
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

uint64_t headOf(const Task &task) { return headTileHead(task.begin); }
uint64_t firstRow(const Task &task) { return headTileRow(task.begin); }
uint64_t endRow(const Task &task) { return headTileRow(task.end); }

std::string describeTile(const Task &task) {
  return "q head " + std::to_string(headOf(task)) + ", rows [" + std::to_string(firstRow(task)) +
         ", " + std::to_string(endRow(task)) + ")";
}

std::string checkTile(const Operation &op, const Task &task) {
  if (!projectsByHead(op))
    return "is a tile of a Gemv that does not project by head";
  if (headTileHead(task.end) != headOf(task) || headOf(task) >= uint64_t(op.numHeads) ||
      headOf(task) >= MK_HEAD_TILE_MOST_HEADS)
    return "does not name one of the operation's " + std::to_string(op.numHeads) + " q heads";
  if (firstRow(task) >= endRow(task) || endRow(task) > op.outputLength)
    return "its rows are not a non-empty part of the operation's " +
           std::to_string(op.outputLength) + " rows";
  if (endRow(task) - firstRow(task) > uint64_t(op.sliceWidth))
    return "takes more rows than the operation's " + std::to_string(op.sliceWidth) + " a tile";
  return "";
}

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  const AttentionLayout layout = attentionLayout(op);
  TaskFootprint footprint;
  addRowRanges(footprint.reads, graph, op.input, layout.partial(headOf(task), 0),
               layout.numChunks * layout.partialLength());
  addRowRanges(footprint.accumulates, graph, op.output, firstRow(task),
               endRow(task) - firstRow(task));
  return footprint;
}

// Its rows of the head's columns.
uint64_t weightElements(const Operation &op, const Task &task) {
  return (endRow(task) - firstRow(task)) * uint64_t(op.headDim);
}

std::vector<int64_t> variant(const TaskGraph &, const Operation &op) {
  return {op.headDim, op.sliceWidth, op.numChunks};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return headProjectionSharedFloats(v[0], v[1], v[2]);
}

} // namespace

extern const TaskKindDescription kHeadProjectionKind = {
    .kind = TaskKind::HeadProjection,
    .name = "HeadProjection",
    .operation = OpKind::Gemv,
    .phaseEvent = nullptr,
    .describeTile = describeTile,
    .checkTile = checkTile,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = noElements,
    .deviceFunction = "headProjectionTask",
    .variantParameters = {{"headDim"}, {"tileRows"}, {"chunks"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads, kGemvLoadsInFlight",
    .sharedFloatsFunction = "mk::headProjectionSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
