// Embed: rows [begin, end) of the hidden state, out = table[token][begin, end),
// for every row of the step with the row's token; with a seed, the same rows
// again into the Fixed64 output of an operation adding into them
// (Operation::seed).
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  TaskFootprint footprint;
  addRowRanges(footprint.reads, graph, op.input, 1, 0, 1);
  addRowRanges(footprint.writes, graph, op.output, task.begin, task.end - task.begin);
  if (op.seed != kNoBuffer)
    addRowRanges(footprint.writes, graph, op.seed, task.begin, task.end - task.begin);
  return footprint;
}

// Its part of one table row. A step of several rows reads that part of each
// row's table row; the count stays that of one, since which rows are read
// depends on the tokens, and next to a step's weights they are few bytes.
uint64_t weightElements(const Operation &, const Task &task) { return task.end - task.begin; }

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {static_cast<int64_t>(op.outputLength), graph.rows};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) { return noSharedFloats(v[0]); }

} // namespace

extern const TaskKindDescription kEmbedKind = {
    .kind = TaskKind::Embed,
    .name = "Embed",
    .operation = OpKind::Embed,
    .phaseEvent = nullptr,
    .describeTile = describeRows,
    .checkTile = checkRows,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = noElements,
    .deviceFunction = "embedTask",
    .variantParameters = {{"row"}, {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::noSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
