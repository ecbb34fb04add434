// The shared-memory ring through which a long attention chunk streams its
// keys and values (AttentionChunkTask.cuh's staged path); its sizes are
// core/protocol/SharedMemory.h's and AttentionLayout.h's.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONSTAGINGRING_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONSTAGINGRING_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// The chunk's keys, then its values, block by block through a ring of
// shared-memory slots (core/protocol/SharedMemory.h sizes it): block i of
// the stream is key block i for i < blocks, value block i - blocks after.
// Every thread copies its share of a block's rows and commits one cp.async
// group per block, so the thread's groups complete in stream order. Rows
// keep the cache's elements (kCacheBytes each) as they are.
template <int kHeadDim, int kGroup, int kChunk, int kCacheBytes, int kThreads>
struct StagingRing {
  using Cache = typename BufferElementOf<kCacheBytes>::Type;
  static constexpr int kRows = static_cast<int>(attentionBlockRows(kHeadDim, kChunk));
  // (A chunk without a ring still names the type; it never uses it.)
  static constexpr int kStages =
      static_cast<int>(attentionStages(kHeadDim, kGroup, kChunk, kCacheBytes) > 2
                           ? attentionStages(kHeadDim, kGroup, kChunk, kCacheBytes)
                           : 2);
  static constexpr int kSlotFloats =
      static_cast<int>(attentionSlotFloats(kHeadDim, kChunk, kCacheBytes));
  // Rows in cache elements.
  static constexpr int kKeyRow = static_cast<int>(attentionKeyRow(kHeadDim, kCacheBytes));
  static constexpr int kValueRow = static_cast<int>(attentionValueRow(kHeadDim, kCacheBytes));
  // 16-byte copies where a row is whole 16-byte units (the caches' offsets
  // are 64-float aligned: runtime/format/ScheduleBlobBuilder.h), else 4
  // bytes (f32 only: a bf16 cache's head dimension is a multiple of 8).
  static constexpr int kUnitElements = kHeadDim * kCacheBytes % 16 == 0 ? 16 / kCacheBytes : 1;
  static constexpr int kUnitsPerRow = kHeadDim / kUnitElements;
  static_assert(kUnitElements * kCacheBytes == 16 || kCacheBytes == 4,
                "bf16 rows are copied in 16-byte units");
  static_assert(kKeyRow >= kHeadDim && kValueRow >= kHeadDim &&
                    kRows * (kKeyRow > kValueRow ? kKeyRow : kValueRow) * kCacheBytes <=
                        kSlotFloats * 4,
                "a block's rows fit its slot");

  float *slots;
  // The chunk's first position's key and value rows (a head's positions
  // are consecutive rows of kHeadDim elements: AttentionLayout.h's
  // cacheEntry), the positions (`count`), and the one row never copied
  // (this step's own, which chunk 0 may be writing: -1 none).
  const Cache *keyRows, *valueRows;
  int count, skippedRow;
  int blocks; // per stream half: ceil(count / kRows)

  __device__ Cache *slot(int i) const {
    return reinterpret_cast<Cache *>(slots + (i % kStages) * kSlotFloats);
  }

  // Asks for block i of the stream (nothing past its end) and commits a
  // group either way, so the group count stays in step with i.
  __device__ __forceinline__ void issue(int i) const {
    if (i < 2 * blocks) {
      const bool key = i < blocks;
      const int firstRow = (key ? i : i - blocks) * kRows, row = key ? kKeyRow : kValueRow;
      const Cache *from = key ? keyRows : valueRows;
      Cache *into = slot(i);
      for (int u = threadIdx.x; u < kRows * kUnitsPerRow; u += kThreads) {
        int r = u / kUnitsPerRow, part = (u % kUnitsPerRow) * kUnitElements, t = firstRow + r;
        if (t >= count || t == skippedRow)
          continue;
        const Cache *source = from + static_cast<long long>(t) * kHeadDim + part;
        if constexpr (kUnitElements * kCacheBytes == 16)
          copyAsync16(into + r * row + part, source, true);
        else
          copyAsync4(into + r * row + part, source);
      }
    }
    copyCommit();
  }

  // Before the task's inputs: all but one slot's worth of blocks.
  __device__ __forceinline__ void start() const {
#pragma unroll 1
    for (int i = 0; i < kStages - 1; ++i)
      issue(i);
  }

  // Block i, once every thread's copies of it have landed; the slot the
  // barrier frees (block i - 1's, which every thread has finished reading)
  // takes block i + kStages - 1. Every consumer calls it, for i = 0, 1, ...
  __device__ __forceinline__ Cache *await(int i) const {
    copyWaitAllBut<kStages - 2>();
    consumerSync<kThreads>();
    issue(i + kStages - 1);
    return slot(i);
  }
};

} // namespace mk::gpu

#endif
