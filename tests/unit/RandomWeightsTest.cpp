// Random weights for a shape-only model: one per name the graph uses, of its
// shape, within the ranges that keep activations near unit size, and the
// same for the same seed.
#include "ToyTaskGraph.h"

#include "compiler/driver/RandomWeights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace mk {
namespace {

TEST(RandomWeightsTest, EveryWeightOfTheGraphInItsRange) {
  toy::ToyModel model = toy::buildToyModel();
  WeightTable table = randomWeights(model.graph);
  for (const Operation &op : model.graph.operations) {
    float bound = std::sqrt(3.0f / static_cast<float>(std::max<uint64_t>(op.inputLength, 1)));
    auto check = [&](const WeightRef &ref, float low, float high) {
      if (ref.name.empty())
        return;
      const Weight *weight = table.find(ref.name);
      ASSERT_NE(weight, nullptr) << ref.name;
      ASSERT_EQ(weight->values.size(), ref.rows * ref.cols) << ref.name;
      auto [least, most] = std::minmax_element(weight->values.begin(), weight->values.end());
      EXPECT_GE(*least, low) << ref.name;
      EXPECT_LE(*most, high) << ref.name;
      EXPECT_LT(*least, *most) << ref.name << " is constant";
    };
    for (const WeightRef &ref : op.weights) {
      float spread = op.kind == OpKind::Embed ? 1.0f : bound;
      check(ref, -spread, spread);
    }
    for (const WeightRef &ref : op.biases)
      check(ref, -0.1f, 0.1f);
    for (const WeightRef *norm : {&op.norm, &op.qNorm, &op.kNorm})
      check(*norm, 0.9f, 1.1f);
  }
}

TEST(RandomWeightsTest, TheSeedDecides) {
  toy::ToyModel model = toy::buildToyModel();
  WeightTable first = randomWeights(model.graph, 7), again = randomWeights(model.graph, 7),
              other = randomWeights(model.graph, 8);
  ASSERT_EQ(first.all().size(), again.all().size());
  bool differs = false;
  for (const auto &[name, weight] : first.all()) {
    EXPECT_EQ(weight.values, again.find(name)->values) << name;
    differs |= weight.values != other.find(name)->values;
  }
  EXPECT_TRUE(differs);
}

// What `mkc compile --random-weights` writes: each weight generated when it
// is read, from any element on, the values the eager table holds.
TEST(RandomWeightsTest, LazyWeightsReadTheEagerValuesFromAnyElement) {
  toy::ToyModel model = toy::buildToyModel();
  WeightTable eager = randomWeights(model.graph, 11), lazy = lazyRandomWeights(model.graph, 11);
  ASSERT_EQ(eager.all().size(), lazy.all().size());
  EXPECT_FALSE(eager.hasLazyWeights());
  EXPECT_TRUE(lazy.hasLazyWeights());
  for (const auto &[name, weight] : eager.all()) {
    const Weight *generated = lazy.find(name);
    ASSERT_NE(generated, nullptr) << name;
    ASSERT_TRUE(generated->isLazy()) << name;
    EXPECT_EQ(generated->shape, weight.shape) << name;
    EXPECT_EQ(generated->allValues(), weight.values) << name;
    uint64_t count = weight.values.size();
    for (uint64_t begin : {uint64_t{1}, count / 3, count - 1}) {
      std::vector<float> tail(count - begin);
      generated->readValues(begin, tail.size(), tail.data());
      EXPECT_TRUE(std::equal(tail.begin(), tail.end(), weight.values.begin() + begin))
          << name << " from element " << begin;
    }
  }
}

} // namespace
} // namespace mk
