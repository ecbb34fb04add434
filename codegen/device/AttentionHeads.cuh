// What an attention chunk does to its group's q heads (and this step's k)
// before the scores, shared by its paths (AttentionChunkTask.cuh,
// AttentionChunkWarpHeads.cuh): each head's RMS norm and its rotary
// rotation, with the rotary frequency a thread may load before the task
// waits. The CPU executor's are runtime/cpu/AttentionChunkTask.cpp's.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONHEADS_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONHEADS_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

// Sums over the lanes that share lane % kStride (a power of two), leaving
// the sum in each of them; every lane of the warp must call it.
template <int kStride>
__device__ __forceinline__ float sumOverStride(float value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset >= kStride; offset /= 2)
    value += __shfl_xor_sync(kFullMask, value, offset);
  return value;
}

// Normalizes heads [firstHead, firstHead + heads) of x in place, each with
// its own RMS, with `weight` (params offset), or leaves them when it is
// MK_NO_OFFSET. One warp a head.
template <int kHeadDim, int kThreads>
__device__ void headRmsNorm(const TaskContext &context, float *x, int firstHead, int heads,
                            unsigned long long weight, float eps, unsigned thread = threadIdx.x) {
  if (weight == MK_NO_OFFSET)
    return;
  constexpr int kWarps = kThreads / kWarpSize;
  const float *scale = context.params + weight;
  int warp = thread / kWarpSize, lane = thread % kWarpSize;
  for (int head = firstHead + warp; head < firstHead + heads; head += kWarps) {
    float *values = x + head * kHeadDim;
    float squares = 0.0f;
    for (int d = lane; d < kHeadDim; d += kWarpSize)
      squares += values[d] * values[d];
    float variance = warpSum(squares) / static_cast<float>(kHeadDim);
    float invRms = 1.0f / sqrtf(variance + eps);
    __syncwarp();
    for (int d = lane; d < kHeadDim; d += kWarpSize)
      values[d] = (values[d] * invRms) * scale[d];
  }
}

// The rotary frequency invFreq[i] of a thread's pairs: the thread takes
// pairs thread, thread + kThreads, ... of the heads, all of them pair
// i = thread % kHalf of its head where kThreads is a multiple of kHalf
// (kAhead). Loaded before the task waits, so that this round trip to L2 is
// not on the chunk's path between q's load and the scores (holding the
// cosine and sine instead, two registers, made Qwen2.5-1.5B's kernel
// spill); without kAhead rotateHeads loads each pair's itself. kLoad is
// false where the task's row takes another path that loads its own
// (warpHeadsChunkRow): only an empty chunk then rotates here, and never
// in practice (chunk 0 always holds a position).
template <int kRotaryDim, int kThreads, bool kLoad = true>
struct RotaryFrequency {
  static constexpr int kHalf = kRotaryDim / 2;
  static constexpr bool kAhead = kLoad && kHalf > 0 && kThreads % kHalf == 0;
  float frequency = 0.0f;
  __device__ RotaryFrequency(const TaskContext &context, const MkOperationRecord &op,
                             unsigned thread) {
    if constexpr (kAhead)
      frequency = context.params[op.invFreq + thread % kHalf];
  }
};

// Rotates heads [0, heads) of x in place at `position`, pair by pair; the
// dimensions past kRotaryDim stay as they are.
template <int kHeadDim, int kRotaryDim, int kThreads, bool kLoad>
__device__ void rotateHeads(const TaskContext &context, const MkOperationRecord &op, float *x,
                            int heads, long long position,
                            const RotaryFrequency<kRotaryDim, kThreads, kLoad> &ahead,
                            unsigned thread = threadIdx.x) {
  constexpr int kHalf = kRotaryDim / 2;
  if constexpr (kHalf > 0) {
    const float *invFreq = context.params + op.invFreq;
    for (int pair = thread; pair < heads * kHalf; pair += kThreads) {
      int head = pair / kHalf, i = pair % kHalf;
      float frequency =
          RotaryFrequency<kRotaryDim, kThreads, kLoad>::kAhead ? ahead.frequency : invFreq[i];
      float angle = static_cast<float>(position) * frequency;
      float sine, cosine;
      sincosf(angle, &sine, &cosine);
      int first = op.interleaved ? 2 * i : i;
      int second = op.interleaved ? 2 * i + 1 : i + kHalf;
      float *values = x + head * kHeadDim;
      float a = values[first], b = values[second];
      values[first] = a * cosine - b * sine;
      values[second] = b * cosine + a * sine;
    }
  }
}

} // namespace mk::gpu

#endif
