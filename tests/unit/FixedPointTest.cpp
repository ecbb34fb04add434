// Fixed64 (core/protocol/FixedPoint.h): what both engines compute when a
// value is added into an Mlp's output and read back.
#include "core/protocol/FixedPoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using mk::fixedToFloat;
using mk::floatToFixed;

// Exact where the value is a multiple of 2^-32 below 2^30, and the nearest
// count (ties to even) where it is finer.
TEST(FixedPointTest, RoundsToTheNearestCount) {
  EXPECT_EQ(floatToFixed(0.0f), 0);
  EXPECT_EQ(floatToFixed(1.0f), int64_t(1) << 32);
  EXPECT_EQ(floatToFixed(-2.5f), -(int64_t(5) << 31));
  EXPECT_EQ(floatToFixed(std::ldexp(1.0f, -32)), 1);
  EXPECT_EQ(floatToFixed(std::ldexp(1.0f, -33)), 0);             // a tie: to even, 0
  EXPECT_EQ(floatToFixed(std::ldexp(3.0f, -33)), 2);             // a tie: to even, 2
  EXPECT_EQ(floatToFixed(-std::ldexp(3.0f, -33)), -2);
  EXPECT_EQ(floatToFixed(std::ldexp(1.0f, -40)), 0);
  for (float value : {1.0f, -7.25f, 1234.5f, 3.0e-5f, -0.1f}) {
    float back = fixedToFloat(floatToFixed(value));
    EXPECT_LE(std::fabs(back - value), std::ldexp(1.0f, -32) + std::fabs(value) * 1e-7f) << value;
  }
}

// Past 2^30, infinities and NaN saturate at +-2^62, so that a few of them
// summed cannot wrap.
TEST(FixedPointTest, SaturatesOutOfRange) {
  const int64_t saturated = int64_t(1) << 62;
  EXPECT_EQ(floatToFixed(std::ldexp(1.0f, 30)), saturated);
  EXPECT_EQ(floatToFixed(-std::ldexp(1.0f, 31)), -saturated);
  EXPECT_EQ(floatToFixed(std::numeric_limits<float>::infinity()), saturated);
  EXPECT_EQ(floatToFixed(-std::numeric_limits<float>::infinity()), -saturated);
  EXPECT_EQ(floatToFixed(std::numeric_limits<float>::quiet_NaN()), saturated);
  EXPECT_LT(floatToFixed(std::nextafter(std::ldexp(1.0f, 30), 0.0f)), saturated);
  EXPECT_EQ(fixedToFloat(saturated), std::ldexp(1.0f, 30));
}

// The point of the format: a sum of many rounded partials has the same bits
// in every order, where f32 sums of the same values do not.
TEST(FixedPointTest, SumsAreTheSameInEveryOrder) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> partials(128);
  for (float &value : partials)
    value = normal(random);
  auto fixedSum = [&] {
    uint64_t sum = 0;
    for (float value : partials)
      sum += static_cast<uint64_t>(floatToFixed(value));
    return fixedToFloat(static_cast<int64_t>(sum));
  };
  auto floatSum = [&] {
    float sum = 0.0f;
    for (float value : partials)
      sum += value;
    return sum;
  };
  const float first = fixedSum();
  bool floatsDiffered = false;
  const float firstFloat = floatSum();
  for (int shuffle = 0; shuffle < 20; ++shuffle) {
    std::shuffle(partials.begin(), partials.end(), random);
    EXPECT_EQ(fixedSum(), first);
    floatsDiffered |= floatSum() != firstFloat;
  }
  EXPECT_TRUE(floatsDiffered) << "f32 sums that never change with the order prove nothing here";
  double exact = 0.0;
  for (float value : partials)
    exact += value;
  EXPECT_NEAR(first, exact, 1e-5);
}

} // namespace
