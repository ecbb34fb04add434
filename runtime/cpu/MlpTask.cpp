// Mlp: intermediate channels [begin, end) of the gated MLP, for every row of
// the step: the channels' gate and up rows over norm(x), silu(gate) * up,
// then each output row's dot product with the down columns of those
// channels, added into the Fixed64 output (core/taskgraph/kinds/
// MlpKind.cpp). The sums are the reference kernels' (f64, rounded to f32),
// so a slice gives the bits whichever executor thread runs it, and the
// fixed-point additions give the same total in any order.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

namespace mk::cpu {

void runMlpTask(TaskContext &context) {
  const Operation &op = context.op;
  const BoundOperation &weights = context.weights;
  uint64_t begin = context.task.begin, end = context.task.end, channels = end - begin;
  uint64_t intermediate = op.weights[0].rows, input = op.inputLength;

  std::vector<float> gateScratch, upScratch, downScratch;
  std::span<const float> gateRows =
      weights.weights[0].elements(begin * input, channels * input, gateScratch);
  std::span<const float> upRows =
      weights.weights[1].elements(begin * input, channels * input, upScratch);
  for (uint64_t r = 0; r < context.rows(); ++r) {
    std::vector<float> x = context.load(op.input, r, 0, input);
    if (!weights.norm.empty()) {
      std::vector<float> normed(x.size());
      kernels::rmsNorm(x, weights.norm, op.eps, normed);
      x = std::move(normed);
    }
    std::vector<float> gates(channels), ups(channels), gated(channels);
    kernels::linear(x, gateRows, {}, gates);
    kernels::linear(x, upRows, {}, ups);
    kernels::siluMul(gates, ups, gated);

    std::vector<float> partial(op.outputLength);
    for (uint64_t row = 0; row < op.outputLength; ++row) {
      std::span<const float> columns =
          weights.weights[2].elements(row * intermediate + begin, channels, downScratch);
      partial[row] = static_cast<float>(kernels::dot(columns, gated));
    }
    context.accumulate(op.output, r, 0, partial);
  }
}

} // namespace mk::cpu
