// Argmax: the whole input; it picks each row's token (the lowest index of
// the largest logit, or sampled: core/protocol/Sampling.h) and ends the step.
// Greedy, it reads the logits' picks where they have them
// (Operation::picks), the same token from a few pairs.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

std::string describeTile(const Task &) { return ""; } // always the whole input
std::string checkTile(const Operation &, const Task &) { return ""; }

// The logits, and their picks where the logits' Gemv writes them (a greedy
// pick reads those instead).
TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &) {
  TaskFootprint footprint{{{op.input, 0, graph.buffers[op.input].elements}},
                          {{op.output, 0, static_cast<uint64_t>(graph.rows)}}};
  if (op.picks < graph.buffers.size())
    footprint.reads.push_back({op.picks, 0, graph.buffers[op.picks].elements});
  return footprint;
}

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {static_cast<int64_t>(op.inputLength), graph.rows};
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
    .variantParameters = {{"vocab"}, {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::argmaxSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
