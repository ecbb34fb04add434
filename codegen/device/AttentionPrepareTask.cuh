// AttentionPrepare for KV head g (runtime/cpu/AttentionPrepareTask.cpp):
// the group's q heads and k_g are head-normalized, then rotated at the
// step's position; roped q goes to scratch, k_g and v_g into the caches.
//
// Load: q heads and k into shared memory (v is copied straight to its slot).
// Compute: one warp per head for the norm; then one thread per rotary pair,
// cos and sin of the f32 angle pos * invFreq[i] as PyTorch computes them.
// Store: each rotated pair, and the dimensions past rotaryDim unchanged.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONPREPARETASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONPREPARETASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Normalizes heads [0, kHeads) of x in place, each with its own RMS, with
// `weight` (params offset) or leaves them when it is MK_NO_OFFSET.
template <int kHeadDim, int kThreads>
__device__ void headRmsNorm(const TaskContext &context, float *x, int firstHead, int heads,
                            unsigned long long weight, float eps) {
  if (weight == MK_NO_OFFSET)
    return;
  constexpr int kWarps = kThreads / kWarpSize;
  const float *scale = context.params + weight;
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
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

template <int kHeadDim, int kGroup, int kRotaryDim, int kThreads>
__device__ void attentionPrepareTask(const TaskContext &context, const MkTaskRecord &task,
                                     const MkOperationRecord &op) {
  using Layout = AttentionShape<kHeadDim, kGroup>;
  const AttentionLayout layout = Layout::of(op);
  constexpr int kHeads = kGroup + 1; // the group's q heads, then k
  unsigned long long group = task.begin;
  long long position = context.position;
  const float *qkv = context.activations + op.input;
  float *x = context.shared; // [kHeads][kHeadDim]
  static_assert(kHeads * kHeadDim == attentionPrepareSharedFloats(kHeadDim, kGroup, kRotaryDim),
                "x is what core/protocol/SharedMemory.h reserves");
  float *keySlot = context.kv + op.keyCache + layout.cacheEntry(position, group);
  float *valueSlot = context.kv + op.valueCache + layout.cacheEntry(position, group);

  // Load.
  for (int i = threadIdx.x; i < kHeads * kHeadDim; i += kThreads)
    x[i] = i < Layout::kGroupLength ? qkv[layout.query(group) + i]
                                    : qkv[layout.key(group) + (i - Layout::kGroupLength)];
  for (int d = threadIdx.x; d < kHeadDim; d += kThreads)
    valueSlot[d] = qkv[layout.value(group) + d];
  __syncthreads();

  // Compute: the head norms.
  headRmsNorm<kHeadDim, kThreads>(context, x, 0, kGroup, op.qNorm, op.eps);
  headRmsNorm<kHeadDim, kThreads>(context, x, kGroup, 1, op.kNorm, op.eps);
  __syncthreads();

  // Compute and store: rotary, pair by pair, into roped q or the key slot.
  auto destination = [&](int head) {
    return head < kGroup ? context.activations + op.roped + layout.query(group) + head * kHeadDim
                         : keySlot;
  };
  constexpr int kHalf = kRotaryDim / 2;
  if constexpr (kHalf > 0) {
    const float *invFreq = context.params + op.invFreq;
    for (int pair = threadIdx.x; pair < kHeads * kHalf; pair += kThreads) {
      int head = pair / kHalf, i = pair % kHalf;
      float angle = static_cast<float>(position) * invFreq[i];
      float sine, cosine;
      sincosf(angle, &sine, &cosine);
      int first = op.interleaved ? 2 * i : i;
      int second = op.interleaved ? 2 * i + 1 : i + kHalf;
      const float *in = x + head * kHeadDim;
      float *out = destination(head);
      out[first] = in[first] * cosine - in[second] * sine;
      out[second] = in[second] * cosine + in[first] * sine;
    }
  }
  constexpr int kPassed = kHeadDim - kRotaryDim;
  if constexpr (kPassed > 0) {
    for (int i = threadIdx.x; i < kHeads * kPassed; i += kThreads) {
      int head = i / kPassed, d = kRotaryDim + i % kPassed;
      destination(head)[d] = x[head * kHeadDim + d];
    }
  }
}

} // namespace mk::gpu

#endif
