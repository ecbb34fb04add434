// A staged attention chunk's arithmetic on tensor cores (bf16 caches): the
// two passes of AttentionChunkTask.cuh's staged path, block by block of the
// ring, with the same inputs and outputs (the scores in shared memory, then
// the head's unnormalized o), so the rest of the chunk is unchanged.
//
// Why: a long chunk's staged form read each key against every q head and
// each value against every head's weight from shared memory, as long again
// as the block's copy (bench/NOTES.md, item 4). Here a block's keys and
// values are read once each, by ldmatrix, every head of the group against
// each read.
//
// The m16n8k16 tiles: A's 16 rows are the group's q heads (rows past the
// group are zeros), so S = q k^T takes a block's keys as B (n8 tiles of
// positions, ldmatrix of [position][dim] rows), and o += P v takes the
// weights as A (k16 steps of positions) and the values as B (ldmatrix.trans,
// n8 tiles of dimensions). q and the weights are f32: each goes in as a
// high and a low bf16 part (splitBf16), two mmas whose sum carries ~16 bits,
// so that the chunk stays within f32's reach of the CPU executor's sums.
// q's parts are read from shared memory at each step and the weights'
// made as they are read: only o's tiles stay in registers, through the
// value blocks (the kernel sits at its register limit).
// Sums have a fixed order (the mma's, then the warps' in slice order), so
// every run gives the same bits.
//
// A block's rows the ring did not copy are written here before use: this
// step's own (from shared memory, the entry chunk 0 is writing) and, in
// the last block of values, the rows past the chunk (zeros: a weight of 0
// times a slot's stale bits could be NaN; a stale key only gives scores
// that are never stored).
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONCHUNKMMA_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONCHUNKMMA_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Fragments.cuh"

namespace mk::gpu {

// Whether a chunk's staged passes run on tensor cores: a bf16 cache, heads
// of whole k16 steps whose o's pairs of n8 tiles divide the warps, up to 16
// heads a group (one m16 tile), blocks of whole k16 steps, one row at a
// time (the ring is the whole CTA's).
template <int kHeadDim, int kGroup, int kCacheBytes, int kBlockRows, int kWarps>
__device__ constexpr bool chunkOnTensorCores() {
  return kCacheBytes == 2 && kHeadDim % 16 == 0 && kWarps % (kHeadDim / 16) == 0 &&
         kGroup <= 16 && kBlockRows % 16 == 0 && kBlockRows / 16 <= kWarps;
}

template <int kHeadDim, int kGroup, int kChunk, int kBlockRows, int kThreads>
struct ChunkMma {
  static constexpr int kWarps = kThreads / kWarpSize;
  static constexpr int kSteps = kHeadDim / 16;       // k16 steps of q . k
  static constexpr int kKeyPairs = kBlockRows / 16;  // a block's pairs of n8 key tiles: a warp each
  static constexpr int kDimPairs = kHeadDim / 16;    // o's pairs of n8 dimension tiles
  static constexpr int kSlices = kWarps / kDimPairs; // warps sharing a pair, each every kSlices-th step
  static constexpr int kValueSteps = kBlockRows / 16; // a block's k16 steps of positions
  static constexpr bool kUpperRows = kGroup > 8;      // A's rows 8..15 hold heads

  // This warp's two n8 tiles of o (pair dimPair), over its slice's steps.
  float o[2][4];

  // q's elements in place as A's operands: each pair of f32 dimensions
  // (d, d + 1) of a head becomes its high bf16 pair then its low one, in
  // the same 8 bytes, so that a fragment is one 8-byte read (no registers
  // held across the blocks). One thread a pair; a barrier must follow.
  __device__ static __forceinline__ void splitQueries(float *queries, unsigned thread) {
    for (unsigned pair = thread; pair < kGroup * kHeadDim / 2; pair += kThreads) {
      const float2 q = reinterpret_cast<const float2 *>(queries)[pair];
      uint2 parts;
      splitBf16(q.x, q.y, parts.x, parts.y);
      reinterpret_cast<uint2 *>(queries)[pair] = parts;
    }
  }

  __device__ __forceinline__ void startValues() {
#pragma unroll
    for (int n = 0; n < 2; ++n)
      o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  }

  // Compute and store: the scores of a block's keys (`slot`, rows of
  // `keyRow` elements, positions from `firstRow` of the chunk's `count`),
  // scaled, into scores[head][position]. Warp w takes keys 16w..16w+15.
  __device__ __forceinline__ void scoreBlock(const unsigned short *slot, int keyRow, int firstRow,
                                             int count, float scale, const float *split,
                                             float *scores) const {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int g = lane / 4, t = lane % 4;
    if (warp >= kKeyPairs || firstRow + warp * 16 >= count)
      return;
    // q's fragment part (row g or g + 8, dimensions d and d + 1) from the
    // split queries: its high and low pairs.
    auto queryPart = [&](int head, int d) {
      return head < kGroup ? *reinterpret_cast<const uint2 *>(split + head * kHeadDim + d)
                           : make_uint2(0, 0);
    };
    float s[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int d = k * 16 + 2 * t;
      const uint2 a0 = queryPart(g, d), a2 = queryPart(g, d + 8);
      const uint2 a1 = kUpperRows ? queryPart(g + 8, d) : make_uint2(0, 0);
      const uint2 a3 = kUpperRows ? queryPart(g + 8, d + 8) : make_uint2(0, 0);
      unsigned b[4];
      loadKeyFragments(slot, keyRow, warp * 16, k * 16, b);
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        mma16816(s[n], a0.x, a1.x, a2.x, a3.x, b[2 * n], b[2 * n + 1]);
        mma16816(s[n], a0.y, a1.y, a2.y, a3.y, b[2 * n], b[2 * n + 1]);
      }
    }
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int head = g + (e >> 1) * 8, position = firstRow + warp * 16 + n * 8 + 2 * t + (e & 1);
        if (head < kGroup && position < count)
          scores[head * kChunk + position] = s[n][e] * scale;
      }
  }

  // Compute: o += P v over a block's values (`slot`, rows of `valueRow`
  // elements), P the weights in scores[head][position] (zeros past
  // `count`). Warp w takes o's pair w % kDimPairs and the block's steps
  // w / kDimPairs, + kSlices, ... .
  __device__ __forceinline__ void accumulateBlock(const unsigned short *slot, int valueRow,
                                                  int firstRow, int count, const float *scores) {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int g = lane / 4, t = lane % 4;
    const int dimPair = warp % kDimPairs, slice = warp / kDimPairs;
#pragma unroll
    for (int step = slice; step < kValueSteps; step += kSlices) {
      const int first = firstRow + step * 16;
      if (first >= count)
        break;
      unsigned pHigh[4], pLow[4];
#pragma unroll
      for (int part = 0; part < 4; ++part) {
        const int head = g + (part & 1) * 8, position = first + 2 * t + (part >> 1) * 8;
        pHigh[part] = pLow[part] = 0;
        if ((part & 1) == 0 || kUpperRows) {
          if (head < kGroup) {
            const float *weights = scores + head * kChunk;
            splitBf16(position < count ? weights[position] : 0.0f,
                      position + 1 < count ? weights[position + 1] : 0.0f, pHigh[part],
                      pLow[part]);
          }
        }
      }
      unsigned b[4];
      loadValueFragments(slot, valueRow, step * 16, dimPair * 16, b);
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        mma16816(o[n], pHigh[0], pHigh[1], pHigh[2], pHigh[3], b[2 * n], b[2 * n + 1]);
        mma16816(o[n], pLow[0], pLow[1], pLow[2], pLow[3], b[2 * n], b[2 * n + 1]);
      }
    }
  }

  // Store: this warp's part of o into sums[slice][head][dim] (kSlices x
  // kGroup x kHeadDim floats), for the caller to add in slice order.
  __device__ __forceinline__ void storeSlices(float *sums) const {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int g = lane / 4, t = lane % 4;
    const int dimPair = warp % kDimPairs, slice = warp / kDimPairs;
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int head = g + (e >> 1) * 8, dim = dimPair * 16 + n * 8 + 2 * t + (e & 1);
        if (head < kGroup)
          sums[(slice * kGroup + head) * kHeadDim + dim] = o[n][e];
      }
  }
};

// A staged block's rows that the ring left: row `ownRow` (this step's
// entry, -1 none) from `own` (kHeadDim floats, already rounded to the
// cache's bf16), and rows [rows, kBlockRows) as zeros. Every thread calls
// it; the caller's barrier orders it before the block's reads.
template <int kHeadDim, int kBlockRows, int kThreads>
__device__ __forceinline__ void completeBlock(unsigned short *slot, int rowElements, int ownRow,
                                              const float *own, int rows) {
  if (ownRow >= 0)
    for (int d = threadIdx.x; d < kHeadDim; d += kThreads)
      slot[ownRow * rowElements + d] = floatToBf16(own[d]);
  for (int i = threadIdx.x; i < (kBlockRows - rows) * kHeadDim; i += kThreads)
    slot[(rows + i / kHeadDim) * rowElements + i % kHeadDim] = 0;
}

} // namespace mk::gpu

#endif
