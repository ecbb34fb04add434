// AttentionChunk (g, c): for each q head of group g, over the positions
// chunk c covers at this step (core/protocol/AttentionLayout.h), the
// running max m of the scores s = (q . k) * scale, l = sum exp(s - m) and
// o = sum exp(s - m) v. A chunk past the position is empty: m = -inf,
// l = 0, o = 0. q and this step's k are head-normalized and rotated first
// (kernels::fusedAttention's order: norm, then rotary); chunk 0 stores this
// step's k and v in the caches, and the chunk holding the position uses
// them as computed. Scores and exp are f32 and sums f64, as in
// kernels::attention.
#include "core/taskgraph/OperationLayouts.h"
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mk::cpu {

namespace {

std::vector<float> normalized(std::vector<float> x, std::span<const float> weight, float eps,
                              int64_t headDim) {
  if (weight.empty())
    return x;
  std::vector<float> y(x.size());
  kernels::headRmsNorm(x, weight, eps, headDim, y);
  return y;
}

std::vector<float> rotated(std::vector<float> x, const Operation &op, int64_t position) {
  if (op.rotaryDim == 0)
    return x;
  kernels::RotaryConfig config{op.headDim, op.rotaryDim, op.invFreq, op.interleaved};
  std::vector<float> y(x.size());
  kernels::rotary(x, config, position, y);
  return y;
}

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
  int64_t span = attentionSpan(context.position, op.numChunks, op.chunkSize);
  int64_t first = chunk * span;
  int64_t last = std::min<int64_t>(first + span, context.position + 1);

  const int64_t position = context.position;
  std::vector<float> queries = rotated(
      normalized(context.load(op.input, layout.query(group), layout.groupLength()),
                 context.weights.qNorm, op.eps, op.headDim),
      op, position);
  std::vector<float> newKey, newValue;
  bool holdsPosition = first <= position && position < last;
  if (chunk == 0 || holdsPosition) {
    newKey = rotated(normalized(context.load(op.input, layout.key(group), layout.headDim),
                                context.weights.kNorm, op.eps, op.headDim),
                     op, position);
    newValue = context.load(op.input, layout.value(group), layout.headDim);
  }
  if (chunk == 0) {
    context.storeSlot(op.keyCache, position, layout.slot(group), newKey);
    context.storeSlot(op.valueCache, position, layout.slot(group), newValue);
  }
  std::vector<float> keys, values;
  for (int64_t t = first; t < last; ++t) {
    std::vector<float> key =
        t == position ? newKey : context.loadSlot(op.keyCache, t, layout.slot(group), layout.headDim);
    std::vector<float> value = t == position ? newValue
                                             : context.loadSlot(op.valueCache, t, layout.slot(group),
                                                                layout.headDim);
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
