// AttentionMerge of the output elements [begin, end) (q heads' dimensions):
// each element's q head combines its chunks' (o, m, l) in chunk order 0, 1,
// ..., rescaled to the largest m:
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

// Dimensions [first, first + out.size()) of one q head from its chunks'
// partials; returns false when no chunk holds a position.
bool mergeChunks(std::span<const float> partials, const AttentionLayout &layout, uint64_t first,
                 std::span<float> out) {
  uint64_t length = layout.partialLength();
  auto isEmpty = [&](uint64_t chunk) {
    return partials[chunk * length + layout.partialSum()] == 0.0f;
  };
  float max = -std::numeric_limits<float>::infinity();
  for (uint64_t c = 0; c < layout.numChunks; ++c)
    if (!isEmpty(c))
      max = std::max(max, partials[c * length + layout.partialMax()]);
  double sum = 0;
  std::vector<double> weighted(out.size(), 0.0);
  for (uint64_t c = 0; c < layout.numChunks; ++c) {
    if (isEmpty(c))
      continue;
    std::span<const float> partial = partials.subspan(c * length, length);
    double scale = std::exp(double(partial[layout.partialMax()]) - double(max));
    sum += double(partial[layout.partialSum()]) * scale;
    for (uint64_t d = 0; d < out.size(); ++d)
      weighted[d] += double(partial[first + d]) * scale;
  }
  // NaN from the chunks (a NaN or infinite activation) goes on as NaN, as
  // on the GPU, for the argmax to report; it is not an empty attention.
  if (std::isnan(sum)) {
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    return true;
  }
  if (!(sum > 0))
    return false;
  for (uint64_t d = 0; d < out.size(); ++d)
    out[d] = static_cast<float>(weighted[d] / sum);
  return true;
}

} // namespace

std::vector<float> mergeAttentionElements(TaskContext &context, const Operation &op,
                                          uint32_t partialsBuffer, uint64_t r, uint64_t begin,
                                          uint64_t end) {
  const AttentionLayout layout = attentionLayout(op);
  const uint64_t firstHead = begin / layout.headDim, lastHead = (end - 1) / layout.headDim;
  const uint64_t headPartials = layout.numChunks * layout.partialLength();
  std::vector<float> partials = context.load(partialsBuffer, r, layout.partial(firstHead, 0),
                                             (lastHead + 1 - firstHead) * headPartials);
  std::vector<float> out(end - begin, 0.0f);
  for (uint64_t h = firstHead; h <= lastHead && context.row(r).active; ++h) {
    // This head's dimensions within [begin, end).
    const uint64_t from = std::max(begin, h * layout.headDim);
    const uint64_t to = std::min(end, (h + 1) * layout.headDim);
    if (!mergeChunks(std::span<const float>(partials).subspan((h - firstHead) * headPartials,
                                                              headPartials),
                     layout, from - h * layout.headDim,
                     std::span<float>(out).subspan(from - begin, to - from)))
      context.fail("no attention chunk of q head " + std::to_string(h) +
                   " holds a position of row " + std::to_string(r));
  }
  return out;
}

void runAttentionMergeTask(TaskContext &context) {
  const Operation &op = context.op;
  for (uint64_t r = 0; r < context.rows(); ++r)
    context.store(op.output, r, context.task.begin,
                  mergeAttentionElements(context, op, op.partials, r, context.task.begin,
                                         context.task.end));
}

} // namespace mk::cpu
