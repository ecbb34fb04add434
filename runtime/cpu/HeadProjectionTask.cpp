// HeadProjection: rows [r0, r1) of a Gemv's columns of q head h, times that
// head's attention output merged from its chunks (as an AttentionMerge task
// would have stored it), added into the Fixed64 output
// (core/taskgraph/kinds/HeadProjectionKind.cpp). Each row's dot product is
// the reference kernels' (f64, rounded to f32), so a tile gives the same
// bits whichever executor thread runs it, and the fixed-point additions
// give the same total in any order.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"
#include "core/protocol/AttentionLayout.h"

namespace mk::cpu {

void runHeadProjectionTask(TaskContext &context) {
  const Operation &op = context.op;
  const uint64_t head = headTileHead(context.task.begin), first = headTileRow(context.task.begin);
  const uint64_t rows = headTileRow(context.task.end) - first;
  const uint64_t headDim = op.headDim, columns = op.inputLength;
  std::vector<float> scratch;
  for (uint64_t r = 0; r < context.rows(); ++r) {
    std::vector<float> merged =
        mergeAttentionElements(context, op, op.input, r, head * headDim, (head + 1) * headDim);
    std::vector<float> partial(rows);
    for (uint64_t row = 0; row < rows; ++row) {
      std::span<const float> weights = context.weights.weights[0].elements(
          (first + row) * columns + head * headDim, headDim, scratch);
      partial[row] = static_cast<float>(kernels::dot(weights, merged));
    }
    context.accumulate(op.output, r, first, partial);
  }
}

} // namespace mk::cpu
