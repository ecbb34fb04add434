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

// The block's best of every thread's candidate, and in `nonFinite` the
// lowest of their non-finite indices, returned to every thread. Its shared
// words are read after its last barrier: a second call needs a barrier
// before it.
template <int kThreads>
__device__ __forceinline__ Candidate blockPick(Candidate best, unsigned &nonFinite) {
  __shared__ Candidate warpBests[kThreads / kWarpSize];
  __shared__ unsigned warpNonFinite[kThreads / kWarpSize];
  nonFinite = warpLowest(nonFinite);
  if (threadIdx.x % kWarpSize == 0)
    warpNonFinite[threadIdx.x / kWarpSize] = nonFinite;
  best = blockBest<kThreads>(best, warpBests); // its barrier publishes warpNonFinite
  for (int w = 0; w < kThreads / kWarpSize; ++w)
    nonFinite = min(nonFinite, warpNonFinite[w]);
  return best;
}

// A thread's candidate for its tile's pick, after it stored `value` at
// `row` (rows in increasing order, so its first largest is its lowest): the
// lowest non-finite row apart.
__device__ __forceinline__ void considerPick(Candidate &best, unsigned &nonFinite, float value,
                                             unsigned long long row) {
  if (!isFinite(value))
    nonFinite = min(nonFinite, static_cast<unsigned>(row));
  else if (best.index == kNoIndex || value > best.value)
    best = Candidate{value, static_cast<unsigned>(row)};
}

// A gemv tile's pick of its outputs: each thread's best of the rows it
// stored (rows grow pass by pass, so its first largest is its lowest), and
// its lowest non-finite row; the block combines them and one thread stores
// the pair at the tile's slot of `picks` (a step row's: two floats a tile).
// Its shared words are read after its last barrier: a second call needs a
// barrier before it.
template <int kThreads>
__device__ __forceinline__ void storePick(float *picks, const MkTaskRecord &task, Candidate best,
                                          unsigned nonFinite) {
  best = blockPick<kThreads>(best, nonFinite);
  if (threadIdx.x != 0)
    return;
  float2 pick = nonFinite != kNoIndex
                    ? make_float2(__int_as_float(0x7fc00000), __uint_as_float(nonFinite))
                    : make_float2(best.value, __uint_as_float(best.index));
  // (Arena offsets are 64-float aligned: runtime/format/ScheduleBlobBuilder.h.)
  reinterpret_cast<float2 *>(picks)[task.ordinal] = pick;
}

} // namespace mk::gpu

#endif
