// AttentionMerge for KV head g: each q head of group g combines its chunks'
// (o, m, l) in chunk order 0, 1, ..., rescaled to the largest m:
// out = sum_c o_c exp(m_c - M) / sum_c l_c exp(m_c - M). Empty chunks add
// nothing and are skipped, so that -inf never meets -inf. Row by row; an
// inactive row (StepRow) attends to nothing and gets zeros.
#include "core/taskgraph/OperationLayouts.h"
#include "runtime/cpu/Tasks.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mk::cpu {

namespace {

// Returns false when no chunk holds a position.
bool mergeChunks(std::span<const float> partials, const AttentionLayout &layout,
                 std::span<float> out) {
  uint64_t length = layout.partialLength(), headDim = layout.headDim;
  auto isEmpty = [&](uint64_t chunk) {
    return partials[chunk * length + layout.partialSum()] == 0.0f;
  };
  float max = -std::numeric_limits<float>::infinity();
  for (uint64_t c = 0; c < layout.numChunks; ++c)
    if (!isEmpty(c))
      max = std::max(max, partials[c * length + layout.partialMax()]);
  double sum = 0;
  std::vector<double> weighted(headDim, 0.0);
  for (uint64_t c = 0; c < layout.numChunks; ++c) {
    if (isEmpty(c))
      continue;
    std::span<const float> partial = partials.subspan(c * length, length);
    double scale = std::exp(double(partial[layout.partialMax()]) - double(max));
    sum += double(partial[layout.partialSum()]) * scale;
    for (uint64_t d = 0; d < headDim; ++d)
      weighted[d] += double(partial[d]) * scale;
  }
  // NaN from the chunks (a NaN or infinite activation) goes on as NaN, as
  // on the GPU, for the argmax to report; it is not an empty attention.
  if (std::isnan(sum)) {
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    return true;
  }
  if (!(sum > 0))
    return false;
  for (uint64_t d = 0; d < headDim; ++d)
    out[d] = static_cast<float>(weighted[d] / sum);
  return true;
}

} // namespace

void runAttentionMergeTask(TaskContext &context) {
  const Operation &op = context.op;
  const AttentionLayout layout = attentionLayout(op);
  uint64_t group = context.task.begin;
  uint64_t headPartials = layout.numChunks * layout.partialLength();

  for (uint64_t r = 0; r < context.rows(); ++r) {
    std::vector<float> partials =
        context.load(op.partials, r, layout.partial(group * layout.group, 0),
                     layout.group * headPartials);
    std::vector<float> out(layout.groupLength(), 0.0f);
    for (uint64_t h = 0; h < layout.group && context.row(r).active; ++h)
      if (!mergeChunks(std::span<const float>(partials).subspan(h * headPartials, headPartials),
                       layout, std::span<float>(out).subspan(h * layout.headDim, layout.headDim)))
        context.fail("no attention chunk of q head " + std::to_string(group * layout.group + h) +
                     " holds a position of row " + std::to_string(r));
    context.store(op.output, r, layout.query(group), out);
  }
}

} // namespace mk::cpu
