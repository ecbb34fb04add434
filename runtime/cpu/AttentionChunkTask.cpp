// AttentionChunk (g, c): for each q head of group g, over the positions of
// chunk c up to the step's own, the running max m of the scores
// s = (q . k) * scale, l = sum exp(s - m) and o = sum exp(s - m) v. A chunk
// past the position is empty: m = -inf, l = 0, o = 0. Scores and exp are
// f32 and sums f64, as in kernels::attention.
#include "core/taskgraph/OperationLayouts.h"
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mk::cpu {

namespace {

void attendChunk(std::span<const float> query, std::span<const float> keys,
                 std::span<const float> values, const AttentionLayout &layout, float scale,
                 std::span<float> partial) {
  uint64_t headDim = layout.headDim;
  uint64_t count = keys.size() / headDim;
  std::vector<float> scores(count);
  float max = -std::numeric_limits<float>::infinity();
  for (uint64_t t = 0; t < count; ++t) {
    scores[t] = static_cast<float>(kernels::dot(query, keys.subspan(t * headDim, headDim))) * scale;
    max = std::max(max, scores[t]);
  }
  double sum = 0;
  std::vector<double> weighted(headDim, 0.0);
  for (uint64_t t = 0; t < count; ++t) {
    float weight = std::exp(scores[t] - max);
    sum += weight;
    for (uint64_t d = 0; d < headDim; ++d)
      weighted[d] += double(weight) * double(values[t * headDim + d]);
  }
  for (uint64_t d = 0; d < headDim; ++d)
    partial[d] = static_cast<float>(weighted[d]);
  partial[layout.partialMax()] = max;
  partial[layout.partialSum()] = static_cast<float>(sum);
}

} // namespace

void runAttentionChunkTask(TaskContext &context) {
  const Operation &op = context.op;
  const AttentionLayout layout = attentionLayout(op);
  uint64_t group = context.task.begin, chunk = context.task.end;
  int64_t first = chunk * op.chunkSize;
  int64_t last = std::min<int64_t>(first + op.chunkSize, context.position + 1);

  std::vector<float> queries =
      context.load(op.roped, layout.query(group), layout.groupLength());
  std::vector<float> keys, values;
  for (int64_t t = first; t < last; ++t) {
    std::vector<float> key = context.loadSlot(op.keyCache, t, layout.slot(group), layout.headDim);
    std::vector<float> value =
        context.loadSlot(op.valueCache, t, layout.slot(group), layout.headDim);
    keys.insert(keys.end(), key.begin(), key.end());
    values.insert(values.end(), value.begin(), value.end());
  }

  std::vector<float> partials(layout.group * layout.partialLength());
  for (uint64_t h = 0; h < layout.group; ++h)
    attendChunk(std::span<const float>(queries).subspan(h * layout.headDim, layout.headDim), keys,
                values, layout, op.scale,
                std::span<float>(partials).subspan(h * layout.partialLength(), layout.partialLength()));

  for (uint64_t h = 0; h < layout.group; ++h)
    context.store(op.partials, layout.partial(group * layout.group + h, chunk),
                  std::span<const float>(partials).subspan(h * layout.partialLength(),
                                                           layout.partialLength()));
}

} // namespace mk::cpu
