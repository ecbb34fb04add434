// The graphs of the prompts' attention by cuDNN (runtime/gpu/CudnnAttention.h)
// against cuDNN's own rules, which need no device: the shapes of the
// harness's models and of the fixtures are taken for sm_90, in passes of
// the fewest and the most rows, and a shape cuDNN refuses is refused with
// cuDNN's reason and the shape named. The library is the CUDA toolkit's
// (or MKRT_CUDNN's); where there is none the tests say so and skip. On the
// GPU, tests/gpu's gpu.prefill.*.cudnn run the graphs.
#include "runtime/gpu/CudnnAttention.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mk {
namespace {

constexpr int kSm90 = 90;
constexpr int64_t kFewestRows = 64, kMostRows = 4096; // runtime/gpu/Prefill.cpp's passes

CudnnAttentionShape shape(int64_t heads, int64_t kvHeads, int64_t headDim, int64_t positions) {
  return {heads, kvHeads, headDim, positions, static_cast<float>(1.0 / std::sqrt(headDim))};
}

bool cudnnFound(std::string &why) {
  why = CudnnAttention::checkShape(shape(4, 2, 64, 256), kFewestRows, kSm90);
  return why.find("not found") == std::string::npos &&
         why.find("does not load") == std::string::npos;
}

TEST(CudnnAttentionTest, TakesTheHarnessShapesAndTheFixtures) {
  std::string why;
  if (!cudnnFound(why))
    GTEST_SKIP() << why;
  struct Named {
    const char *name;
    CudnnAttentionShape shape;
  };
  // bench/configs/ (heads, KV heads, head dim) at the harness's longest
  // context, and the fixtures of tests/fixtures/configs.json.
  const Named shapes[] = {
      {"llama-3.2-1b", shape(32, 8, 64, 32800)},  {"llama-3.1-8b", shape(32, 8, 128, 4128)},
      {"qwen2.5-1.5b", shape(12, 2, 128, 32800)}, {"qwen3-1.7b", shape(16, 8, 128, 32800)},
      {"qwen3-0.6b", shape(16, 8, 128, 32800)},   {"smollm2-135m", shape(9, 3, 64, 32800)},
      {"llama3 fixture", shape(4, 2, 16, 256)},   {"qwen2 fixture", shape(6, 1, 16, 256)},
      {"qwen3 fixture", shape(4, 2, 32, 256)},    {"mistral fixture", shape(5, 5, 16, 256)}};
  for (const Named &named : shapes)
    for (int64_t rows : {kFewestRows, kMostRows})
      EXPECT_EQ(CudnnAttention::checkShape(named.shape, rows, kSm90), "")
          << named.name << ", passes of " << rows << " rows";
}

TEST(CudnnAttentionTest, ARefusedShapeSaysWhyAndWhich) {
  std::string why;
  if (!cudnnFound(why))
    GTEST_SKIP() << why;
  // Heads of 20 dimensions: cuDNN takes multiples of 8.
  std::string refused = CudnnAttention::checkShape(shape(4, 2, 20, 256), kFewestRows, kSm90);
  EXPECT_NE(refused.find("4 heads over 2 KV heads of 20"), std::string::npos) << refused;
  EXPECT_NE(refused.find("multiple of 8"), std::string::npos) << refused;
}

} // namespace
} // namespace mk
