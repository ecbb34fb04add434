// Gemv: output rows [begin, end) of epilogue(concat_i(W_i * norm(x) + b_i)).
// Every tile normalizes the whole input itself rather than waiting for a
// separate norm task: the input is short and the norm is cheap next to the
// weight rows. Per row it is kernels::linear's arithmetic, so a tile gives
// the bits the whole-op kernels::gemv gives for those rows. Each row of the
// step is its own input: the weight rows are read once for all of them.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

#include <algorithm>

namespace mk::cpu {

namespace {

// Rows [begin, end) of the stacked W_i x + b_i, which may span weights.
void stackedRows(std::span<const float> x, const BoundOperation &weights, const Operation &op,
                 uint64_t begin, uint64_t end, std::span<float> y) {
  uint64_t inputLength = x.size();
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
      kernels::linear(x, rows, bias, y.subspan(from - begin, to - from));
    }
    first = last;
  }
}

void gemvRow(TaskContext &context, uint64_t r) {
  const Operation &op = context.op;
  uint64_t begin = context.task.begin, end = context.task.end, rows = end - begin;

  std::vector<float> x = context.load(op.input, r, 0, op.inputLength);
  std::vector<float> residual;
  if (op.epilogue == Epilogue::Residual)
    residual = context.load(op.residual, r, begin, rows);

  if (!context.weights.norm.empty()) {
    std::vector<float> normed(x.size());
    kernels::rmsNorm(x, context.weights.norm, op.eps, normed);
    x = std::move(normed);
  }
  std::vector<float> out(rows);
  switch (op.epilogue) {
  case Epilogue::None:
    stackedRows(x, context.weights, op, begin, end, out);
    break;
  case Epilogue::SiluMul: {
    // Output row j is silu(gate row j) * up row j: rows j and N + j of the stack.
    std::vector<float> gate(rows), up(rows);
    stackedRows(x, context.weights, op, begin, end, gate);
    stackedRows(x, context.weights, op, op.outputLength + begin, op.outputLength + end, up);
    kernels::siluMul(gate, up, out);
    break;
  }
  case Epilogue::Residual: {
    std::vector<float> y(rows);
    stackedRows(x, context.weights, op, begin, end, y);
    kernels::add(residual, y, out);
    break;
  }
  }

  context.store(op.output, r, begin, out);
}

} // namespace

void runGemvTask(TaskContext &context) {
  for (uint64_t r = 0; r < context.rows(); ++r)
    gemvRow(context, r);
}

} // namespace mk::cpu
