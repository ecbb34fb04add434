// The device's sampler (codegen/device/SamplingTask.cuh) compiled for the
// host as a block of one thread, against the CPU reference
// (core/kernels/Sampling.cpp): the same token for every setting and seed.
// One thread runs every strided loop whole and every barrier is a no-op,
// so this checks the device function's arithmetic and logic (the radix
// select, the sort, the penalty's marks, the draws), not its parallel
// schedule; the GPU checks (tests/gpu/TaskKindCheck.cpp) do that.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace host_shim {
struct Index {
  unsigned x = 0;
};
inline Index threadIdx, blockIdx;
} // namespace host_shim

#define __CUDACC_RTC__ 1
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
using host_shim::blockIdx;
using host_shim::threadIdx;
struct uint4 {
  unsigned x, y, z, w;
};
struct float4 {
  float x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, 4); return f; }
inline float __uint_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned v; std::memcpy(&v, &f, 4); return v; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline void __syncthreads() {}
inline void __threadfence() {}
inline unsigned __cvta_generic_to_shared(const void *) { return 0; }
template <class T> T __shfl_xor_sync(unsigned, T value, int) { return value; }
inline unsigned atomicAdd(unsigned *address, unsigned value) {
  unsigned old = *address;
  *address += value;
  return old;
}
inline unsigned long long atomicExch(unsigned long long *address, unsigned long long value) {
  unsigned long long old = *address;
  *address = value;
  return old;
}
inline unsigned atomicCAS(unsigned *address, unsigned compare, unsigned value) {
  unsigned old = *address;
  if (old == compare)
    *address = value;
  return old;
}


#include "codegen/device/SamplingTask.cuh"

#undef __device__
#undef __forceinline__
#undef __noinline__
#undef __shared__

#include "core/kernels/Kernels.h"
#include "core/kernels/Sampling.h"

#include <gtest/gtest.h>

#include <random>

namespace {

// The device path of the argmax task for one step: the penalty, the
// argmax, then the sampler, as ArgmaxTask.cuh calls them.
template <int kVocab>
long long deviceToken(const std::vector<float> &raw, const MkSamplingSettings &s,
                      const std::vector<long long> &context, long long position,
                      std::vector<unsigned long long> &marks, unsigned long long launch) {
  MkControlBlock control{};
  control.sampling = s;
  std::vector<long long> tokens = context;
  std::vector<float> penalized(kVocab);
  control.contextTokens = reinterpret_cast<unsigned long long>(tokens.data());
  control.penaltyMarks = reinterpret_cast<unsigned long long>(marks.data());
  control.penaltyLogits = reinterpret_cast<unsigned long long>(penalized.data());
  control.penaltyTag = launch << 32;
  std::vector<float> shared(MK_SAMPLING_SHARED_FLOATS + 4);
  mk::gpu::TaskContext context_{};
  context_.control = &control;
  context_.shared = shared.data();
  context_.step = 0;
  context_.position = position;
  const float *logits = mk::gpu::penalizeRepetitions<kVocab, 1>(context_, raw.data());
  unsigned best = 0;
  for (unsigned i = 1; i < kVocab; ++i)
    if (logits[i] > logits[best])
      best = i;
  if (mk_sampling_is_greedy(&s))
    return best;
  unsigned sampled = mk::gpu::sampleToken<kVocab, 1>(context_, logits, logits[best], position);
  return sampled == 0xffffffffu ? best : sampled;
}

template <int kVocab>
void compareOnVocabulary() {
  std::mt19937_64 random(kVocab);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<unsigned long long> marks(kVocab, 0);
  unsigned long long launch = 0;
  int compared = 0;
  for (float scale : {1.0f, 4.0f, 12.0f})
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<float> logits(kVocab);
      for (float &l : logits)
        l = scale * normal(random);
      long long position = static_cast<long long>(random() % 40);
      std::vector<long long> context(position + 2, -1);
      for (long long j = 0; j <= position; ++j)
        context[j] = static_cast<long long>(random() % std::min(kVocab, 50));
      for (unsigned long long seed : {1ull, 99ull, 123456789ull})
        for (MkSamplingSettings s :
             {mk_sampling_settings(1.0f, 0, 1.0f, 0.0f, 1.0f, seed), mk_sampling_settings(0.7f, 40, 1.0f, 0.0f, 1.0f, seed),
              mk_sampling_settings(1.0f, 1024, 1.0f, 0.0f, 1.0f, seed), mk_sampling_settings(1.0f, 0, 0.9f, 0.0f, 1.0f, seed),
              mk_sampling_settings(1.3f, 50, 0.8f, 0.0f, 1.0f, seed), mk_sampling_settings(1.0f, 0, 1.0f, 0.05f, 1.0f, seed),
              mk_sampling_settings(0.9f, 20, 0.95f, 0.1f, 1.3f, seed), mk_sampling_settings(0.0f, 0, 1.0f, 0.0f, 1.7f, seed),
              mk_sampling_settings(2.0f, 3, 1.0f, 0.0f, 0.8f, seed)}) {
          long long device = deviceToken<kVocab>(logits, s, context, position, marks, ++launch);
          std::vector<float> penalized = logits;
          std::vector<int64_t> seen(context.begin(), context.begin() + position + 1);
          if (mk_sampling_has_penalty(&s))
            mk::kernels::applyRepetitionPenalty(penalized, seen, s.repetitionPenalty);
          int64_t cpu = mk::kernels::sampleToken(penalized, s, position);
          ASSERT_EQ(device, cpu) << "vocab " << kVocab << ", scale " << scale << ", temperature "
                                 << s.temperature << ", top_k " << s.topK << ", top_p " << s.topP
                                 << ", min_p " << s.minP << ", penalty " << s.repetitionPenalty
                                 << ", seed " << seed;
          ++compared;
        }
    }
  EXPECT_EQ(compared, 3 * 3 * 3 * 9);
}

// A batch step penalizes its rows one after another through one copy and
// one set of marks, each row with its own tokens and tag (argmaxRowsTask):
// every row's penalized logits are the CPU's for that row's tokens alone,
// though the rows share tokens, and a step's tags again penalize afresh.
TEST(DeviceSampling, PenalizesEachRowOfABatchByItsOwnTokens) {
  constexpr int kVocab = 64;
  const MkSamplingSettings s = mk_sampling_settings(1.0f, 0, 1.0f, 0.0f, 1.5f, 1);
  std::vector<unsigned long long> marks(kVocab, 0);
  std::vector<float> penalized(kVocab);
  MkControlBlock control{};
  control.sampling = s;
  control.penaltyMarks = reinterpret_cast<unsigned long long>(marks.data());
  control.penaltyLogits = reinterpret_cast<unsigned long long>(penalized.data());
  control.penaltyTag = 7ull << 32;
  mk::gpu::TaskContext context{};
  context.control = &control;
  std::vector<float> logits(kVocab);
  for (int i = 0; i < kVocab; ++i)
    logits[i] = static_cast<float>((i * 37) % 23) - 11.0f;
  // Rows 0 and 2 share tokens 5 and 9; row 1 has none of theirs.
  const std::vector<std::vector<long long>> rows = {{5, 9, 9, 12}, {1, 2, 3, 3}, {9, 5, 40, 63}};
  constexpr int kRows = 3;
  for (long long step = 0; step < 2; ++step)
    for (int r = 0; r < kRows; ++r) {
      const long long position = 2 + step; // positions [0, position] count
      const float *out = mk::gpu::penalizeTokens<kVocab, 1>(
          context, logits.data(), rows[r].data(), position,
          control.penaltyTag + static_cast<unsigned long long>(step) * kRows + r + 1);
      std::vector<float> expected = logits;
      std::vector<int64_t> seen(rows[r].begin(), rows[r].begin() + position + 1);
      mk::kernels::applyRepetitionPenalty(expected, seen, s.repetitionPenalty);
      ASSERT_EQ(std::vector<float>(out, out + kVocab), expected) << "step " << step << ", row " << r;
    }
}

TEST(DeviceSampling, PicksTheCpuReferencesTokenOnATinyVocabulary) { compareOnVocabulary<37>(); }
TEST(DeviceSampling, PicksTheCpuReferencesTokenOnAMiddleVocabulary) { compareOnVocabulary<1000>(); }
TEST(DeviceSampling, PicksTheCpuReferencesTokenOnALargeVocabulary) { compareOnVocabulary<5003>(); }

} // namespace
