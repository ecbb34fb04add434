// AllReduce: rows [begin, end) of out = residual + sum over the ranks of
// in, summed in rank order 0, 1, ... on every rank so that every rank holds
// the same bits. Tensor parallel only (TaskGraph::ranks > 1): `in` is this
// rank's partial sum of a row-parallel gemv (o_proj, down_proj), which every
// rank's AllReduce reads from every rank (its peer reads), each row range
// waiting only on the tiles that wrote it, on every rank (allRanks waits).
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  TaskFootprint footprint;
  uint64_t rows = task.end - task.begin;
  addRowRanges(footprint.reads, graph, op.input, task.begin, rows);
  addRowRanges(footprint.reads, graph, op.residual, task.begin, rows);
  addRowRanges(footprint.writes, graph, op.output, task.begin, rows);
  addRowRanges(footprint.peerReads, graph, op.input, task.begin, rows);
  return footprint;
}

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {static_cast<int64_t>(op.outputLength), graph.rows};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) { return noSharedFloats(v[0]); }

} // namespace

extern const TaskKindDescription kAllReduceKind = {
    .kind = TaskKind::AllReduce,
    .name = "AllReduce",
    .operation = OpKind::AllReduce,
    .phaseEvent = nullptr,
    .describeTile = describeRows,
    .checkTile = checkRows,
    .footprint = footprint,
    .weightElements = noElements,
    .cacheElements = noElements,
    .deviceFunction = "allReduceTask", // codegen/device/AllReduceTask.cuh
    .variantParameters = {{"length"}, {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::noSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
