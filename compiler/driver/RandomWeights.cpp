#include "compiler/driver/RandomWeights.h"

#include <algorithm>
#include <cmath>

namespace mk {

WeightTable randomWeights(const TaskGraph &graph, uint64_t seed) {
  WeightTable table;
  uint64_t state = seed;
  // A linear congruential generator: fast for billions of values, and the
  // same on every machine, unlike the standard library's distributions.
  auto uniform = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>((state >> 40) * 0x1.0p-24) * 2.0f - 1.0f;
  };
  // A WeightRef's cols == 1 stands for a vector and for a one-column
  // matrix alike: operations' weights are matrices, biases and norms vectors.
  auto add = [&](const WeightRef &ref, bool matrix, float center, float spread) {
    if (ref.name.empty() || table.find(ref.name))
      return;
    Weight weight{ref.name, {static_cast<int64_t>(ref.rows), static_cast<int64_t>(ref.cols)},
                  StorageType::F32, std::vector<float>(ref.rows * ref.cols)};
    if (!matrix)
      weight.shape = {static_cast<int64_t>(ref.rows)};
    for (float &value : weight.values)
      value = center + spread * uniform();
    table.add(std::move(weight));
  };
  for (const Operation &op : graph.operations) {
    float spread = std::sqrt(3.0f / static_cast<float>(std::max<uint64_t>(op.inputLength, 1)));
    for (const WeightRef &ref : op.weights)
      add(ref, true, 0.0f, op.kind == OpKind::Embed ? 1.0f : spread);
    for (const WeightRef &ref : op.biases)
      add(ref, false, 0.0f, 0.1f);
    for (const WeightRef *norm : {&op.norm, &op.qNorm, &op.kNorm})
      add(*norm, false, 1.0f, 0.1f);
  }
  return table;
}

} // namespace mk
