// A candidate logit and the block's best of them, shared by the Argmax and
// by the Gemv that writes the logits' picks (Operation::picks in
// core/taskgraph/TaskGraph.h): a pick is two floats, the tile's largest
// value and its index as the bits of a float, or NaN and the lowest index of
// a non-finite value.
#ifndef MKC_CODEGEN_DEVICE_PICKS_CUH
#define MKC_CODEGEN_DEVICE_PICKS_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

constexpr unsigned kNoIndex = 0xffffffffu;

struct Candidate {
  float value;
  unsigned index;
};

// The larger value, or of equal values the lower index; a candidate with no
// index loses to any other.
__device__ __forceinline__ Candidate better(Candidate a, Candidate b) {
  return (a.index == kNoIndex ||
          (b.index != kNoIndex && (b.value > a.value || (b.value == a.value && b.index < a.index))))
             ? b
             : a;
}

__device__ __forceinline__ Candidate warpBest(Candidate candidate) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    Candidate other{__shfl_xor_sync(kFullMask, candidate.value, offset),
                    __shfl_xor_sync(kFullMask, candidate.index, offset)};
    candidate = better(candidate, other);
  }
  return candidate;
}

// The best of every consumer thread's candidate, returned to all of them.
// One barrier: `warpBests` ([kThreads / 32] in shared memory) must not be
// reused before another barrier.
template <int kThreads>
__device__ __forceinline__ Candidate blockBest(Candidate candidate, Candidate *warpBests) {
  candidate = warpBest(candidate);
  if (threadIdx.x % kWarpSize == 0)
    warpBests[threadIdx.x / kWarpSize] = candidate;
  consumerSync<kThreads>();
  Candidate best = warpBests[0];
  for (int w = 1; w < kThreads / kWarpSize; ++w)
    best = better(best, warpBests[w]);
  return best;
}

// The lower of the warp's indices (kNoIndex: none).
__device__ __forceinline__ unsigned warpLowest(unsigned index) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    index = min(index, __shfl_xor_sync(kFullMask, index, offset));
  return index;
}

} // namespace mk::gpu

#endif
