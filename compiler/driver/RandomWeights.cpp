#include "compiler/driver/RandomWeights.h"

#include <algorithm>
#include <cmath>

namespace mk {

namespace {

// A linear congruential generator: fast for billions of values, and the
// same on every machine, unlike the standard library's distributions.
constexpr uint64_t kMultiplier = 6364136223846793005ull;
constexpr uint64_t kIncrement = 1442695040888963407ull;

// The state `steps` steps after `state`, in O(log steps): composing the
// affine step with itself by squaring, so that any element of any weight
// can be generated without generating those before it.
uint64_t skipAhead(uint64_t state, uint64_t steps) {
  uint64_t multiplier = 1, increment = 0;
  uint64_t stepMultiplier = kMultiplier, stepIncrement = kIncrement;
  while (steps > 0) {
    if (steps & 1) {
      multiplier *= stepMultiplier;
      increment = increment * stepMultiplier + stepIncrement;
    }
    stepIncrement = (stepMultiplier + 1) * stepIncrement;
    stepMultiplier *= stepMultiplier;
    steps >>= 1;
  }
  return multiplier * state + increment;
}

// One weight's values: center + spread * u for the generator's draws from
// `start` on, each in [-1, 1).
class RandomValues final : public WeightValues {
public:
  RandomValues(uint64_t start, float center, float spread)
      : start(start), center(center), spread(spread) {}

  void read(uint64_t begin, uint64_t count, float *out) const override {
    uint64_t state = skipAhead(start, begin);
    for (uint64_t i = 0; i < count; ++i) {
      state = state * kMultiplier + kIncrement;
      float uniform = static_cast<float>((state >> 40) * 0x1.0p-24) * 2.0f - 1.0f;
      out[i] = center + spread * uniform;
    }
  }

private:
  uint64_t start;
  float center, spread;
};

} // namespace

WeightTable lazyRandomWeights(const TaskGraph &graph, uint64_t seed) {
  WeightTable table;
  // Where the next weight's draws start: the weights take consecutive draws
  // of one generator, in the order they are added here.
  uint64_t drawn = 0;
  // A WeightRef's cols == 1 stands for a vector and for a one-column
  // matrix alike: operations' weights are matrices, biases and norms vectors.
  auto add = [&](const WeightRef &ref, bool matrix, float center, float spread) {
    if (ref.name.empty() || table.find(ref.name))
      return;
    Weight weight{ref.name, {static_cast<int64_t>(ref.rows), static_cast<int64_t>(ref.cols)},
                  StorageType::F32, {}};
    if (!matrix)
      weight.shape = {static_cast<int64_t>(ref.rows)};
    weight.source = std::make_shared<RandomValues>(skipAhead(seed, drawn), center, spread);
    drawn += ref.rows * ref.cols;
    table.add(std::move(weight));
  };
  // A matrix's spread follows its own input length (its columns).
  auto addMatrix = [&](const WeightRef &ref, const Operation &op) {
    float spread = std::sqrt(3.0f / static_cast<float>(std::max<uint64_t>(ref.cols, 1)));
    add(ref, true, 0.0f, op.kind == OpKind::Embed ? 1.0f : spread);
  };
  for (const Operation &op : graph.operations) {
    // An Mlp draws in the order of the gate_up and down Gemvs it stands for
    // (gate, up, the norm, then down), so that --fuse-mlp changes no weight.
    size_t first = op.kind == OpKind::Mlp ? 2 : op.weights.size();
    for (size_t i = 0; i < first; ++i)
      addMatrix(op.weights[i], op);
    for (const WeightRef &ref : op.biases)
      add(ref, false, 0.0f, 0.1f);
    for (const WeightRef *norm : {&op.norm, &op.qNorm, &op.kNorm})
      add(*norm, false, 1.0f, 0.1f);
    for (size_t i = first; i < op.weights.size(); ++i)
      addMatrix(op.weights[i], op);
  }
  return table;
}

WeightTable randomWeights(const TaskGraph &graph, uint64_t seed) {
  WeightTable table = lazyRandomWeights(graph, seed);
  table.materialize();
  return table;
}

} // namespace mk
