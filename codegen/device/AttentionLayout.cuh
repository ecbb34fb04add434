// The attention layout of core/protocol/AttentionLayout.h, the one every
// engine reads, with a kernel variant's head size and group as compile-time
// constants: the sizes a task's loops need as constants, and the layout of
// an operation record for its offsets.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONLAYOUT_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONLAYOUT_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/AttentionLayout.h"

namespace mk::gpu {

template <int kHeadDim, int kGroup>
struct AttentionShape {
  static constexpr AttentionLayout kSizes{0, 0, kHeadDim, kGroup, 0};
  static constexpr int kGroupLength = static_cast<int>(kSizes.groupLength());
  static constexpr int kPartialLength = static_cast<int>(kSizes.partialLength());
  static constexpr int kMax = static_cast<int>(kSizes.partialMax());
  static constexpr int kSum = static_cast<int>(kSizes.partialSum());

  __device__ static AttentionLayout of(const MkOperationRecord &op) {
    return {static_cast<mk_u64>(op.numHeads), static_cast<mk_u64>(op.numKvHeads), kHeadDim,
            kGroup, static_cast<mk_u64>(op.numChunks)};
  }
};

} // namespace mk::gpu

#endif
