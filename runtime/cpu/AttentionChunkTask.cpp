// AttentionChunk (g, c): for each q head of group g, over the positions
// chunk c covers at this step (core/protocol/AttentionLayout.h), the
// running max m of the scores s = (q . k) * scale, l = sum exp(s - m) and
// o = sum exp(s - m) v, for every row of the step: a row attends to its own
// sequence up to its own position. A chunk past the position is empty:
// m = -inf, l = 0, o = 0. q and this step's k are head-normalized and
// rotated first (kernels::fusedAttention's order: norm, then rotary); chunk
// 0 stores the step's k and v in the caches, and a row uses the keys and
// values of the step's rows (its own, and in a prefill chunk the earlier
// positions) as computed, never from a slot written this step. Scores and
// exp are f32 and sums f64, as in kernels::attention.
#include "core/taskgraph/OperationLayouts.h"
#include "runtime/cpu/Tasks.h"
#include "runtime/format/Bf16.h"

#include "core/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

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

// The step's k (normalized, rotated) and v of each row of one KV head,
// computed when first asked for.
class StepKeys {
public:
  StepKeys(TaskContext &context, const AttentionLayout &layout, uint64_t group)
      : context(context), layout(layout), group(group), keys(context.rows()),
        values(context.rows()) {
    for (uint64_t r = 0; r < context.rows(); ++r)
      if (context.row(r).active)
        rowAt[{context.row(r).sequence, context.row(r).position}] = r;
  }

  // The row of the step at (sequence, position), or -1.
  int64_t rowOf(int64_t sequence, int64_t position) const {
    auto it = rowAt.find({sequence, position});
    return it == rowAt.end() ? -1 : static_cast<int64_t>(it->second);
  }

  const std::vector<float> &key(uint64_t r) {
    fill(r);
    return keys[r];
  }
  const std::vector<float> &value(uint64_t r) {
    fill(r);
    return values[r];
  }

private:
  void fill(uint64_t r) {
    if (!keys[r].empty())
      return;
    const Operation &op = context.op;
    keys[r] = rotated(normalized(context.load(op.input, r, layout.key(group), layout.headDim),
                                 context.weights.kNorm, op.eps, op.headDim),
                      op, context.row(r).position);
    values[r] = context.load(op.input, r, layout.value(group), layout.headDim);
    // What the caches keep is what every chunk attends to, this step's
    // entries included.
    if (context.elementOf(op.keyCache) == BufferElement::BF16)
      for (std::vector<float> *entry : {&keys[r], &values[r]})
        for (float &value : *entry)
          value = roundToBf16(value);
  }

  TaskContext &context;
  const AttentionLayout &layout;
  uint64_t group;
  std::vector<std::vector<float>> keys, values;
  std::map<std::pair<int64_t, int64_t>, uint64_t> rowAt;
};

// Row r's partials of chunk `chunk` for the q heads of `group`.
std::vector<float> attendRow(TaskContext &context, const AttentionLayout &layout, uint64_t group,
                             uint64_t chunk, uint64_t r, StepKeys &stepKeys) {
  const Operation &op = context.op;
  std::vector<float> partials(layout.group * layout.partialLength(), 0.0f);
  const StepRow &row = context.row(r);
  if (!row.active) {
    for (uint64_t h = 0; h < layout.group; ++h)
      partials[h * layout.partialLength() + layout.partialMax()] =
          -std::numeric_limits<float>::infinity();
    return partials;
  }
  auto [first, last] = attentionChunkPositions(row.position, op.window, chunk, op.chunksPerRound,
                                               op.numChunks, op.chunkSize);

  std::vector<float> queries = rotated(
      normalized(context.load(op.input, r, layout.query(group), layout.groupLength()),
                 context.weights.qNorm, op.eps, op.headDim),
      op, row.position);
  std::vector<float> keys, values;
  for (int64_t t = first; t < last; ++t) {
    int64_t fed = stepKeys.rowOf(row.sequence, t);
    std::vector<float> key = fed >= 0 ? stepKeys.key(fed)
                                      : context.loadSlot(op.keyCache, row.sequence, t, group,
                                                         layout.headDim);
    std::vector<float> value = fed >= 0 ? stepKeys.value(fed)
                                        : context.loadSlot(op.valueCache, row.sequence, t, group,
                                                           layout.headDim);
    keys.insert(keys.end(), key.begin(), key.end());
    values.insert(values.end(), value.begin(), value.end());
  }
  for (uint64_t h = 0; h < layout.group; ++h)
    attendChunk(std::span<const float>(queries).subspan(h * layout.headDim, layout.headDim), keys,
                values, layout, op.scale,
                std::span<float>(partials).subspan(h * layout.partialLength(), layout.partialLength()));
  return partials;
}

} // namespace

void runAttentionChunkTask(TaskContext &context) {
  const Operation &op = context.op;
  const AttentionLayout layout = attentionLayout(op);
  uint64_t group = context.task.begin, chunk = context.task.end;
  StepKeys stepKeys(context, layout, group);

  if (chunk == 0)
    for (uint64_t r = 0; r < context.rows(); ++r) {
      const StepRow &row = context.row(r);
      if (!row.active)
        continue;
      context.storeSlot(op.keyCache, row.sequence, row.position, group, stepKeys.key(r));
      context.storeSlot(op.valueCache, row.sequence, row.position, group, stepKeys.value(r));
    }
  for (uint64_t r = 0; r < context.rows(); ++r) {
    std::vector<float> partials = attendRow(context, layout, group, chunk, r, stepKeys);
    for (uint64_t h = 0; h < layout.group; ++h)
      context.store(op.partials, r, layout.partial(group * layout.group + h, chunk),
                    std::span<const float>(partials).subspan(h * layout.partialLength(),
                                                             layout.partialLength()));
  }
}

} // namespace mk::cpu
