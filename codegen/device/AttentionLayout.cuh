// Where the attention tasks of one operation find their data
// (runtime/cpu/AttentionLayout.h): the q heads of KV head g are heads
// [g * kGroup, (g + 1) * kGroup) of q | k | v; the caches are
// [maxContext][numKvHeads][kHeadDim]; a chunk's partial for a q head is
// [o (kHeadDim), max, sum] at ((head * numChunks) + chunk) * (kHeadDim + 2).
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONLAYOUT_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONLAYOUT_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

template <int kHeadDim, int kGroup>
struct AttentionLayout {
  static constexpr int kPartialLength = kHeadDim + 2;
  static constexpr int kMax = kHeadDim, kSum = kHeadDim + 1;
  static constexpr int kGroupLength = kGroup * kHeadDim;

  __device__ static unsigned long long query(unsigned long long group) {
    return group * kGroupLength;
  }
  __device__ static unsigned long long key(const MkOperationRecord &op, unsigned long long group) {
    return (op.numHeads + group) * kHeadDim;
  }
  __device__ static unsigned long long value(const MkOperationRecord &op,
                                             unsigned long long group) {
    return (op.numHeads + op.numKvHeads + group) * kHeadDim;
  }
  // Of the KV cache entry of `group` at `position`, from a cache's start.
  __device__ static unsigned long long slot(const MkOperationRecord &op, long long position,
                                            unsigned long long group) {
    return (position * op.numKvHeads + group) * kHeadDim;
  }
  __device__ static unsigned long long partial(const MkOperationRecord &op,
                                               unsigned long long head,
                                               unsigned long long chunk) {
    return (head * op.numChunks + chunk) * kPartialLength;
  }
};

} // namespace mk::gpu

#endif
