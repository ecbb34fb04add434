// Gemv: output rows [begin, end) of epilogue(W * prologue(in) + b), W the
// operation's weights stacked by rows. It reads its whole input (the
// prologue norm needs all of it) and, with a residual epilogue, its rows of
// the residual; every row of the step alike, each weight row streamed once
// for all of them. Its input and residual may be Fixed64 (an Mlp's output),
// read as f32; with a seed it also stores its rows there (Operation::seed).
// A Gemv merging an attention (mergesAttention: o_proj with
// --merge-in-o-proj) reads every chunk's partials instead of an input; one
// projecting by head (--o-proj-by-head) has no tiles of this kind, only
// HeadProjection's.
#include "core/protocol/FixedPoint.h"
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  TaskFootprint footprint;
  if (mergesAttention(op)) {
    const AttentionLayout layout = attentionLayout(op);
    addRowRanges(footprint.reads, graph, op.input, 0,
                 layout.numHeads * layout.numChunks * layout.partialLength());
  } else {
    addRowRanges(footprint.reads, graph, op.input, 0, op.inputLength);
  }
  if (op.epilogue == Epilogue::Residual)
    addRowRanges(footprint.reads, graph, op.residual, task.begin, task.end - task.begin);
  addRowRanges(footprint.writes, graph, op.output, task.begin, task.end - task.begin);
  if (op.seed != kNoBuffer)
    addRowRanges(footprint.writes, graph, op.seed, task.begin, task.end - task.begin);
  if (op.picks < graph.buffers.size())
    addRowRanges(footprint.writes, graph, op.picks, 2 * uint64_t(task.ordinal), 2);
  return footprint;
}

// Rows, and a slot of the picks where it writes them.
std::string checkTile(const Operation &op, const Task &task) {
  if (projectsByHead(op))
    return "is a row tile of a Gemv projecting by head, which has HeadProjection tiles only";
  if (std::string problem = checkRows(op, task); !problem.empty())
    return problem;
  if (op.picks != kNoBuffer && int64_t(task.ordinal) >= op.numPicks)
    return "writes pick " + std::to_string(task.ordinal) + " of " + std::to_string(op.numPicks);
  return "";
}

// Its rows of each stacked matrix (both halves of a SiLU-gated pair) and of
// the biases, and the whole norm vector.
uint64_t weightElements(const Operation &op, const Task &task) {
  uint64_t perRow = op.inputLength + (op.biases.empty() ? 0 : 1);
  uint64_t stacked = isGated(op.epilogue) ? 2 : 1;
  return stacked * (task.end - task.begin) * perRow + (op.norm.name.empty() ? 0 : op.inputLength);
}

// The variant's "forms" bits (MK_GEMV_*, core/protocol/FixedPoint.h).
int64_t formBits(const TaskGraph &graph, const Operation &op) {
  bool residual = op.epilogue == Epilogue::Residual;
  return (keepsFixed64(graph, op.input) ? MK_GEMV_FIXED_INPUT : 0) |
         (residual && keepsFixed64(graph, op.residual) ? MK_GEMV_FIXED_RESIDUAL : 0) |
         (op.seed != kNoBuffer ? MK_GEMV_SEEDS : 0) |
         (mergesAttention(op) ? MK_GEMV_MERGED_INPUT : 0);
}

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {static_cast<int64_t>(op.inputLength), static_cast<int64_t>(op.epilogue),
          !op.norm.name.empty(), !op.biases.empty(), op.picks != kNoBuffer,
          formBits(graph, op), graph.rows};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return gemvSharedFloats(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
}

} // namespace

extern const TaskKindDescription kGemvKind = {
    .kind = TaskKind::Gemv,
    .name = "Gemv",
    .operation = OpKind::Gemv,
    .phaseEvent = nullptr,
    .describeTile = describeRows,
    .checkTile = checkTile,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = noElements,
    .deviceFunction = "gemvTask",
    .variantParameters = {{"input"}, {"epilogue", spellEpilogue}, {"norm", spellBoolean},
                          {"bias", spellBoolean}, {"picks", spellBoolean}, {"forms"},
                          {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads, kGemvLoadsInFlight, kGemvEarlySlots, kGemvFirstWeights, kTaskSharedBytes, kWeightRingSlots, kWeightRingSlotBytes",
    .sharedFloatsFunction = "mk::gemvSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
