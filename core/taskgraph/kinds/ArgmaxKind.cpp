// Argmax: the whole input; it picks each row's token (the lowest index of
// the largest logit, or sampled: core/protocol/Sampling.h) and ends the step.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

std::string describeTile(const Task &) { return ""; } // always the whole input
std::string checkTile(const Operation &, const Task &) { return ""; }

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &) {
  return {{{op.input, 0, graph.buffers[op.input].elements}},
          {{op.output, 0, static_cast<uint64_t>(graph.rows)}}};
}

std::vector<int64_t> variant(const TaskGraph &, const Operation &op) {
  return {static_cast<int64_t>(op.inputLength)};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) { return argmaxSharedFloats(v[0]); }

} // namespace

extern const TaskKindDescription kArgmaxKind = {
    .kind = TaskKind::Argmax,
    .name = "Argmax",
    .operation = OpKind::Argmax,
    .phaseEvent = nullptr,
    .describeTile = describeTile,
    .checkTile = checkTile,
    .footprint = footprint,
    .weightElements = noElements,
    .cacheElements = noElements,
    .deviceFunction = "argmaxTask",
    .variantParameters = {{"vocab"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::argmaxSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
