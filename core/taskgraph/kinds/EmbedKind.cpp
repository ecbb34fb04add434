// Embed: rows [begin, end) of the hidden state, out = table[token][begin, end).
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &, const Operation &op, const Task &task) {
  return {{{op.input, 0, 1}}, {{op.output, task.begin, task.end}}};
}

uint64_t weightElements(const Operation &, const Task &task) { return task.end - task.begin; }

std::vector<int64_t> variant(const Operation &op) {
  return {static_cast<int64_t>(op.outputLength)};
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
    .variantParameters = {{"row"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::noSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
