// Mlp: intermediate channels [begin, end) of the gated MLP, through both of
// its matrices: h = silu(W_gate[begin, end) * norm(in)) * (W_up[begin, end)
// * norm(in)), then out += W_down[:, begin:end) * h, every output row added
// into the Fixed64 output (core/protocol/FixedPoint.h). The slices need no
// order among themselves, so the MLP that gate_up and down made two phases
// (down waiting on all of gate_up) is one, each weight still read once. The
// output's seed (the residual) is written before by the Gemv that produces
// it (Operation::seed); whoever reads the output waits on every slice.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

uint64_t intermediate(const Operation &op) {
  return op.weights.empty() ? 0 : op.weights[0].rows;
}

std::string describeTile(const Task &task) {
  return "channels [" + std::to_string(task.begin) + ", " + std::to_string(task.end) + ")";
}

std::string checkTile(const Operation &op, const Task &task) {
  uint64_t channels = intermediate(op);
  if (task.begin >= task.end || task.end > channels)
    return "its channels are not a non-empty part of the operation's " +
           std::to_string(channels) + " intermediate channels";
  if (task.begin % 8 != 0 || task.end - task.begin > static_cast<uint64_t>(op.sliceWidth))
    return "its channels do not start at a multiple of 8 or are more than the operation's "
           "slice of " + std::to_string(op.sliceWidth);
  return "";
}

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &) {
  TaskFootprint footprint;
  addRowRanges(footprint.reads, graph, op.input, 0, op.inputLength);
  addRowRanges(footprint.accumulates, graph, op.output, 0, op.outputLength);
  return footprint;
}

// Its channels' rows of gate and up, its channels' columns of down, and the
// whole norm vector.
uint64_t weightElements(const Operation &op, const Task &task) {
  uint64_t channels = task.end - task.begin;
  return channels * (2 * op.inputLength + op.outputLength) +
         (op.norm.name.empty() ? 0 : op.inputLength);
}

std::vector<int64_t> variant(const TaskGraph &, const Operation &op) {
  return {static_cast<int64_t>(op.inputLength), static_cast<int64_t>(op.outputLength),
          op.sliceWidth, !op.norm.name.empty()};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return mlpSharedFloats(v[0], v[1], v[2], v[3]);
}

} // namespace

extern const TaskKindDescription kMlpKind = {
    .kind = TaskKind::Mlp,
    .name = "Mlp",
    .operation = OpKind::Mlp,
    .phaseEvent = nullptr,
    .describeTile = describeTile,
    .checkTile = checkTile,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = noElements,
    .deviceFunction = "mlpTask",
    .variantParameters = {{"input"}, {"output"}, {"slice"}, {"norm", spellBoolean}},
    .variantArguments = variant,
    .kernelArguments = "kThreads, kGemvLoadsInFlight",
    .sharedFloatsFunction = "mk::mlpSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
