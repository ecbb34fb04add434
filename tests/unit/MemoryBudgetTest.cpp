// checkMemoryFits: the refusal of a model too big for the device's free
// memory, with the numbers (tests/gpu/GpuFixtureCheck.cpp makes a real GPU
// refuse one).
#include "runtime/gpu/MemoryBudget.h"

#include <gtest/gtest.h>

namespace mk {
namespace {

constexpr uint64_t kMiB = uint64_t(1) << 20, kGiB = uint64_t(1) << 30;

TEST(MemoryBudget, FitsWithTheReserveToSpare) {
  std::vector<MemoryNeed> needs = {{"the weights", 10 * kGiB}, {"the KV arena", 2 * kGiB}};
  EXPECT_EQ(checkMemoryFits(needs, 13 * kGiB, 16 * kGiB, kGiB), "");
  EXPECT_EQ(checkMemoryFits({}, 0, 16 * kGiB, 0), "");
}

TEST(MemoryBudget, RefusesWithEveryNeedAndTheDevicesMemory) {
  std::vector<MemoryNeed> needs = {{"the weights", 15 * kGiB},
                                   {"the KV arena for 131072 positions", 16 * kGiB}};
  EXPECT_EQ(checkMemoryFits(needs, 20 * kGiB, 24 * kGiB, 256 * kMiB),
            "the model needs 31.0 GiB of device memory (the weights 15.0 GiB, the KV arena "
            "for 131072 positions 16.0 GiB) and 256.0 MiB to spare for a launch; the GPU has "
            "20.0 GiB free of 24.0 GiB");
}

TEST(MemoryBudget, RefusesWhenOnlyTheReserveIsShort) {
  std::vector<MemoryNeed> needs = {{"the weights", kGiB}};
  EXPECT_NE(checkMemoryFits(needs, kGiB + kMiB, 2 * kGiB, 256 * kMiB), "");
  EXPECT_EQ(checkMemoryFits(needs, kGiB + 256 * kMiB, 2 * kGiB, 256 * kMiB), "");
}

} // namespace
} // namespace mk
