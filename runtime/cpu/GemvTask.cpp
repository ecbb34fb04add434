// Gemv: output rows [begin, end) of epilogue(concat_i(W_i * norm(x) + b_i)),
// for every row of the step. Every tile normalizes the whole input itself
// rather than waiting for a separate norm task: the input is short and the
// norm is cheap next to the weight rows. Per row it is kernels::linear's
// arithmetic, so a tile gives the bits the whole-op kernels::gemv gives for
// those rows. The tile's weight rows are read (widened from bf16) once for
// all the step's rows, as the kernel streams each weight once a step. A
// Fixed64 input or residual loads as f32; a seed stores the rows again, as
// fixed point, into the Mlp output they start. A Gemv merging an attention
// (o_proj with --merge-in-o-proj) merges its chunks' partials as the
// AttentionMerge tasks would have.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace mk::cpu {

namespace {

// Rows [begin, end) of the stacked W_i x_r + b_i for every input x_r, which
// may span weights; ys[r] receives x_r's.
void stackedRows(const std::vector<std::vector<float>> &xs, const BoundOperation &weights,
                 const Operation &op, uint64_t begin, uint64_t end,
                 std::vector<std::vector<float>> &ys) {
  uint64_t inputLength = op.inputLength;
  uint64_t first = 0;
  std::vector<float> widened;
  for (size_t i = 0; i < op.weights.size(); ++i) {
    uint64_t last = first + op.weights[i].rows;
    uint64_t from = std::max(begin, first), to = std::min(end, last);
    if (from < to) {
      std::span<const float> rows = weights.weights[i].elements(
          (from - first) * inputLength, (to - from) * inputLength, widened);
      std::span<const float> bias =
          weights.biases.empty() ? std::span<const float>() : weights.biases[i].subspan(from - first, to - from);
      for (size_t r = 0; r < xs.size(); ++r)
        kernels::linear(xs[r], rows, bias,
                        std::span<float>(ys[r]).subspan(from - begin, to - from));
    }
    first = last;
  }
}

// The tile's pick (Operation::picks): its largest value and that value's
// row, the lowest among equals; or NaN and the lowest row of a non-finite
// value. The row travels as the bits of a float.
std::array<float, 2> pickOf(const std::vector<float> &values, uint64_t firstRow) {
  size_t best = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      return {std::numeric_limits<float>::quiet_NaN(),
              std::bit_cast<float>(static_cast<uint32_t>(firstRow + i))};
    if (values[i] > values[best])
      best = i;
  }
  return {values[best], std::bit_cast<float>(static_cast<uint32_t>(firstRow + best))};
}

} // namespace

void runGemvTask(TaskContext &context) {
  const Operation &op = context.op;
  uint64_t begin = context.task.begin, end = context.task.end, rows = end - begin;
  uint64_t count = context.rows();

  std::vector<std::vector<float>> xs(count), residuals(count);
  for (uint64_t r = 0; r < count; ++r) {
    xs[r] = mergesAttention(op)
                ? mergeAttentionElements(context, op, op.input, r, 0, op.inputLength)
                : context.load(op.input, r, 0, op.inputLength);
    if (op.epilogue == Epilogue::Residual)
      residuals[r] = context.load(op.residual, r, begin, rows);
    if (!context.weights.norm.empty()) {
      std::vector<float> normed(xs[r].size());
      kernels::rmsNorm(xs[r], context.weights.norm, op.eps, normed);
      xs[r] = std::move(normed);
    }
  }
  std::vector<std::vector<float>> outs(count, std::vector<float>(rows));
  switch (op.epilogue) {
  case Epilogue::None:
    stackedRows(xs, context.weights, op, begin, end, outs);
    break;
  case Epilogue::SiluMul:
  case Epilogue::GeluTanhMul: {
    // Output row j is act(gate row j) * up row j: rows j and N + j of the stack.
    std::vector<std::vector<float>> gates(count, std::vector<float>(rows)), ups = gates;
    stackedRows(xs, context.weights, op, begin, end, gates);
    stackedRows(xs, context.weights, op, op.outputLength + begin, op.outputLength + end, ups);
    for (uint64_t r = 0; r < count; ++r)
      if (op.epilogue == Epilogue::SiluMul)
        kernels::siluMul(gates[r], ups[r], outs[r]);
      else
        kernels::geluTanhMul(gates[r], ups[r], outs[r]);
    break;
  }
  case Epilogue::Residual: {
    std::vector<std::vector<float>> ys(count, std::vector<float>(rows));
    stackedRows(xs, context.weights, op, begin, end, ys);
    for (uint64_t r = 0; r < count; ++r)
      kernels::add(residuals[r], ys[r], outs[r]);
    break;
  }
  }

  for (uint64_t r = 0; r < count; ++r) {
    context.store(op.output, r, begin, outs[r]);
    if (op.seed != kNoBuffer)
      context.store(op.seed, r, begin, outs[r]);
    if (op.picks != kNoBuffer)
      context.store(op.picks, r, 2 * uint64_t(context.task.ordinal), pickOf(outs[r], begin));
  }
}

} // namespace mk::cpu
