// Causal attention of a prompt's rows over the KV cache, on tensor cores
// (runtime/format/PrefillArgs.h): the rows' k and v are in the cache
// already (PrefillKernels.cuh's prepare), so row r attends to the slots
// [0, firstPosition + r] of its KV head, earlier prompts' and its own
// chunk's alike; with a sliding window, the last `window` of them only.
//
// A CTA takes MK_PREFILL_ATTENTION_ROWS query rows of one KV head, a
// query row being a prompt row and one q head of the head's group, so the
// group's heads share each staged block; a warp takes one or two tiles of
// 16 of them (two where the registers allow, heads of up to 64: each
// fragment of K and V read from shared memory then serves both). It walks
// the cache MK_PREFILL_ATTENTION_KEYS positions at a time up to its last
// row's position, as flash attention does: a running max and sum per row,
// o rescaled when the max grows; only blocks that reach past a warp's
// first row are masked. Load: the block's keys and values ([key][dim]) into
// shared memory as bf16, rows padded so that ldmatrix's eight rows hit 32
// banks. Compute: scores S = q k^T and o += P v by mma.m16n8k16, K's
// fragments by ldmatrix and V's by ldmatrix.trans; S's accumulators are,
// pair by pair, P's A fragments (the PTX ISA's layouts agree), so P never
// leaves registers. Store: o / l into the output row, as f32, or as bf16
// where it is the next Gemv's GEMM input.
// A head of whole 8 dimensions but not of 16 (Phi-3's fixture: 24) is
// padded to whole k16 steps: its staged rows' and q's extra dimensions are
// zeros, which add nothing to the scores, and o's extra tiles are not
// stored.
// The exponentials are exp2 of scores scaled by log2(e); sums are f32.
#ifndef MKC_CODEGEN_DEVICE_PREFILLATTENTION_CUH
#define MKC_CODEGEN_DEVICE_PREFILLATTENTION_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Fragments.cuh"
#include "codegen/device/PrefillKernels.cuh"
#include "core/protocol/AttentionLayout.h"

namespace mk::gpu {

// Eight consecutive f32 cache elements (two aligned 16-byte units: a
// slot's dimension d is a multiple of 8) as floats.
__device__ __forceinline__ void readEight(const float *from, float (&out)[8]) {
  readUnit<4, 4>(from, reinterpret_cast<float (&)[4]>(out[0]));
  readUnit<4, 4>(from + 4, reinterpret_cast<float (&)[4]>(out[4]));
}

// 2^x by the SFU alone (ex2.approx.ftz: a result below the smallest
// normal f32 is 0, which weighs nothing next to the row's max, 2^0).
__device__ __forceinline__ float exp2Fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <int kHeadDim, int kCacheBytes>
__device__ void prefillAttention(const MkPrefillAttentionArgs &args) {
  using Element = BufferElementOf<kCacheBytes>;
  using Cache = typename Element::Type;
  constexpr int kKeys = MK_PREFILL_ATTENTION_KEYS;
  constexpr int kWarps = MK_PREFILL_ATTENTION_WARPS(kHeadDim);
  constexpr int kThreads = kWarps * kWarpSize;
  constexpr int kTiles = MK_PREFILL_ATTENTION_ROWS / (16 * kWarps); // m16 tiles a warp
  constexpr int kWarpRows = 16 * kTiles;
  constexpr int kPadded = MK_PREFILL_PADDED_HEAD_DIM(kHeadDim);
  constexpr int kSteps = kPadded / 16;   // k16 steps of q . k
  constexpr int kDimTiles = kPadded / 8; // n8 tiles of o, in pairs
  constexpr int kKeyTiles = kKeys / 8;    // n8 tiles of S
  constexpr int kStride = MK_PREFILL_ATTENTION_STRIDE(kHeadDim); // bf16 elements a staged row
  constexpr int kStage = kKeys * kStride;                        // one block's keys, or values
  constexpr int kUnits = kPadded / 8;                            // 16-byte bf16 units a staged row
  constexpr int kChunks = kKeys * kUnits;                        // ... a block's keys
  static_assert(kHeadDim % MK_PREFILL_HEAD_DIM_UNIT == 0 && kPadded <= MK_PREFILL_MAX_HEAD_DIM,
                "heads of whole 16-byte units, within the registers");
  static_assert(MK_PREFILL_ATTENTION_ROWS == kWarpRows * kWarps, "whole m16 tiles a warp");
  static_assert(kKeys % 16 == 0 && kStride % 8 == 0, "whole k16 steps, rows of 16-byte units");
  // Two stages of [keys | values], each [kKeys][kStride] bf16: block b + 1
  // is copied while block b is computed (bf16 caches, by cp.async).
  extern __shared__ __align__(16) unsigned short staged[];

  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4; // the fragments' row group and pair
  // A query row m is a prompt row and a q head of the KV head's group,
  // m = row * group + head in the group, so the group's heads share every
  // staged block of keys and values. The last tiles, which see the most
  // keys, start first.
  const int group = static_cast<int>(args.numHeads / args.numKvHeads);
  const int numHeads = static_cast<int>(args.numHeads), kvHead = blockIdx.x;
  const int queryRows = static_cast<int>(args.rows) * group;
  const int tileRow = (gridDim.y - 1 - blockIdx.y) * MK_PREFILL_ATTENTION_ROWS;
  const int warpRow = tileRow + warp * kWarpRows;
  const int firstPosition = static_cast<int>(args.firstPosition);
  const int lastPosition =
      firstPosition + (min(tileRow + MK_PREFILL_ATTENTION_ROWS, queryRows) - 1) / group;
  const int warpFirst = firstPosition + min(warpRow, queryRows - 1) / group;
  const int warpLast = firstPosition + min(warpRow + kWarpRows - 1, queryRows - 1) / group;
  // A sliding window (0: none): row p keeps the keys [p + 1 - window, p].
  // The tile's blocks start at its first row's oldest key.
  const int window = static_cast<int>(args.window);
  const int tileFirst = firstPosition + min(tileRow, queryRows - 1) / group;
  const int firstBlock = static_cast<int>(attentionWindowStart(tileFirst, window)) / kKeys;
  const int warpOldest = static_cast<int>(attentionWindowStart(warpFirst, window));
  const AttentionLayout layout{args.numHeads, args.numKvHeads, kHeadDim, 0, 0};
  const Cache *keyCache = deviceAddress<const Cache>(args.keyCache);
  const Cache *valueCache = deviceAddress<const Cache>(args.valueCache);
  const float scale = args.scale * 1.44269504088896340736f; // log2(e)

  // Load: block `block`'s keys and values into stage block % 2; positions
  // past the tile's last are zeros (masked below), and so are a padded
  // head's dimensions past kHeadDim. A bf16 cache's rows go
  // by cp.async (one commit group a block); an f32 one's are widened and
  // rounded here.
  auto stage = [&](int block) {
    unsigned short *keys = staged + (block % 2) * 2 * kStage, *values = keys + kStage;
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      const int key = c / kUnits, d = (c % kUnits) * 8;
      const int position = block * kKeys + key;
      const bool inside = position <= lastPosition && d < kHeadDim;
      const unsigned long long slot =
          layout.cacheEntry(inside ? position : 0, kvHead, args.capacity) + (inside ? d : 0);
      if constexpr (kCacheBytes == 2) {
        copyAsync16(keys + key * kStride + d, keyCache + slot, inside);
        copyAsync16(values + key * kStride + d, valueCache + slot, inside);
      } else {
        float k[8], v[8];
        readEight(keyCache + slot, k);
        readEight(valueCache + slot, v);
        uint4 keyUnit = make_uint4(0, 0, 0, 0), valueUnit = make_uint4(0, 0, 0, 0);
        if (inside) {
          keyUnit = make_uint4(packBf16(k[0], k[1]), packBf16(k[2], k[3]), packBf16(k[4], k[5]),
                               packBf16(k[6], k[7]));
          valueUnit = make_uint4(packBf16(v[0], v[1]), packBf16(v[2], v[3]), packBf16(v[4], v[5]),
                                 packBf16(v[6], v[7]));
        }
        *reinterpret_cast<uint4 *>(keys + key * kStride + d) = keyUnit;
        *reinterpret_cast<uint4 *>(values + key * kStride + d) = valueUnit;
      }
    }
    copyCommit();
  };
  // Where query row m's q and o live: [row][numHeads][headDim].
  auto rowOffset = [&](int m) {
    const int row = m / group, head = kvHead * group + m % group;
    return (static_cast<unsigned long long>(row) * numHeads + head) * kHeadDim;
  };

  // Load: this warp's q rows as A fragments, kTiles of 16 rows, so that
  // each fragment of K and V read from shared memory serves them all (rows
  // past the prompt read its last row and are never stored; a padded
  // head's dimensions past kHeadDim are zeros). A tile's row g is "0", its
  // row g + 8 "1".
  unsigned q[kTiles][kSteps][4];
  int position[kTiles][2];
  const unsigned short *queries = deviceAddress<const unsigned short>(args.queries);
#pragma unroll
  for (int i = 0; i < kTiles; ++i) {
    const int m0 = warpRow + i * 16 + g, m1 = m0 + 8;
    const unsigned short *q0 = queries + rowOffset(min(m0, queryRows - 1));
    const unsigned short *q1 = queries + rowOffset(min(m1, queryRows - 1));
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int d = k * 16 + 2 * t;
      auto pair = [&](const unsigned short *row, int at) {
        return at < kHeadDim ? *reinterpret_cast<const unsigned *>(row + at) : 0u;
      };
      q[i][k][0] = pair(q0, d);
      q[i][k][1] = pair(q1, d);
      q[i][k][2] = pair(q0, d + 8);
      q[i][k][3] = pair(q1, d + 8);
    }
    position[i][0] = firstPosition + m0 / group;
    position[i][1] = firstPosition + m1 / group;
  }
  float o[kTiles][kDimTiles][4], max[kTiles][2], sum[kTiles][2];
#pragma unroll
  for (int i = 0; i < kTiles; ++i) {
#pragma unroll
    for (int n = 0; n < kDimTiles; ++n)
      o[i][n][0] = o[i][n][1] = o[i][n][2] = o[i][n][3] = 0.0f;
    max[i][0] = max[i][1] = negativeInfinity();
    sum[i][0] = sum[i][1] = 0.0f;
  }

  const int blocks = lastPosition / kKeys + 1;
  if constexpr (kCacheBytes == 2)
    stage(firstBlock);
  for (int block = firstBlock; block < blocks; ++block) {
    const int firstKey = block * kKeys;
    // Every warp is done with the stage the next block takes.
    __syncthreads();
    if constexpr (kCacheBytes == 2) {
      if (block + 1 < blocks)
        stage(block + 1);
      else
        copyCommit();
      copyWaitAllBut<1>();
    } else {
      stage(block);
    }
    __syncthreads();
    // A warp whose rows all precede the block, whose windows all start
    // past it, or that has no rows, has nothing in it.
    if (firstKey > warpLast || firstKey + kKeys - 1 < warpOldest || warpRow >= queryRows)
      continue;
    const unsigned short *keys = staged + (block % 2) * 2 * kStage, *values = keys + kStage;

    // Compute: S = q k^T, each K fragment against every tile.
    float s[kTiles][kKeyTiles][4];
#pragma unroll
    for (int n = 0; n < kKeyTiles; n += 2) {
#pragma unroll
      for (int i = 0; i < kTiles; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[i][n][e] = s[i][n + 1][e] = 0.0f;
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        unsigned b[4];
        loadKeyFragments(keys, kStride, n * 8, k * 16, b);
#pragma unroll
        for (int i = 0; i < kTiles; ++i) {
          mma16816(s[i][n], q[i][k][0], q[i][k][1], q[i][k][2], q[i][k][3], b[0], b[1]);
          mma16816(s[i][n + 1], q[i][k][0], q[i][k][1], q[i][k][2], q[i][k][3], b[2], b[3]);
        }
      }
    }
    // Compute: the softmax's running max and sum, masked past each row
    // where the block reaches past the warp's first row (and before each
    // row's window where it reaches before its last row's), then weights
    // exp2(s scale - max scale) in place, one multiply-add and one ex2 a
    // score (the scale is positive, Prefill.cpp checks, so the max of the
    // raw scores is the max of the scaled ones).
    const bool masked =
        firstKey + kKeys - 1 > warpFirst || (window > 0 && firstKey <= warpLast - window);
#pragma unroll
    for (int i = 0; i < kTiles; ++i) {
      float blockMax[2] = {negativeInfinity(), negativeInfinity()};
#pragma unroll
      for (int n = 0; n < kKeyTiles; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = firstKey + n * 8 + 2 * t + (e & 1), half = e / 2;
          if (masked && (key > position[i][half] ||
                         (window > 0 && key <= position[i][half] - window)))
            s[i][n][e] = negativeInfinity();
          blockMax[half] = fmaxf(blockMax[half], s[i][n][e]);
        }
#pragma unroll
      for (int half = 0; half < 2; ++half) {
#pragma unroll
        for (int offset = 1; offset < 4; offset *= 2)
          blockMax[half] = fmaxf(blockMax[half], __shfl_xor_sync(kFullMask, blockMax[half], offset));
        // The running max; a row that has seen no position yet keeps -inf
        // and weighs everything 0.
        const float newMax = fmaxf(max[i][half], blockMax[half]);
        const float base = newMax == negativeInfinity() ? 0.0f : newMax * scale;
        const float rescale = exp2Fast(fmaf(max[i][half], scale, -base));
        max[i][half] = newMax;
        sum[i][half] *= rescale;
#pragma unroll
        for (int n = 0; n < kDimTiles; ++n) {
          o[i][n][2 * half] *= rescale;
          o[i][n][2 * half + 1] *= rescale;
        }
#pragma unroll
        for (int n = 0; n < kKeyTiles; ++n) {
          s[i][n][2 * half] = exp2Fast(fmaf(s[i][n][2 * half], scale, -base));
          s[i][n][2 * half + 1] = exp2Fast(fmaf(s[i][n][2 * half + 1], scale, -base));
          sum[i][half] += s[i][n][2 * half] + s[i][n][2 * half + 1];
        }
      }
    }
    // Compute: o += P v, a k16 step being two of S's n8 tiles, each V
    // fragment against every tile.
#pragma unroll
    for (int k = 0; k < kKeys / 16; ++k) {
      unsigned p[kTiles][4];
#pragma unroll
      for (int i = 0; i < kTiles; ++i) {
        p[i][0] = packBf16(s[i][2 * k][0], s[i][2 * k][1]);
        p[i][1] = packBf16(s[i][2 * k][2], s[i][2 * k][3]);
        p[i][2] = packBf16(s[i][2 * k + 1][0], s[i][2 * k + 1][1]);
        p[i][3] = packBf16(s[i][2 * k + 1][2], s[i][2 * k + 1][3]);
      }
#pragma unroll
      for (int n = 0; n < kDimTiles; n += 2) {
        unsigned b[4];
        loadValueFragments(values, kStride, k * 16, n * 8, b);
#pragma unroll
        for (int i = 0; i < kTiles; ++i) {
          mma16816(o[i][n], p[i][0], p[i][1], p[i][2], p[i][3], b[0], b[1]);
          mma16816(o[i][n + 1], p[i][0], p[i][1], p[i][2], p[i][3], b[2], b[3]);
        }
      }
    }
  }
  copyWait();

  // Store: o / l, the lanes of a row group adding their parts of l; as
  // bf16 when the output is the next Gemv's GEMM input.
#pragma unroll
  for (int i = 0; i < kTiles; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float l = sum[i][half];
#pragma unroll
      for (int offset = 1; offset < 4; offset *= 2)
        l += __shfl_xor_sync(kFullMask, l, offset);
      const int m = warpRow + i * 16 + g + 8 * half;
      if (m >= queryRows)
        continue;
      const unsigned long long offset = rowOffset(m) + 2 * t;
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n) {
        const float first = o[i][n][2 * half] / l, second = o[i][n][2 * half + 1] / l;
        if (args.bf16Output)
          *deviceAddress<unsigned>(args.output + 2 * (offset + n * 8)) = packBf16(first, second);
        else
          *reinterpret_cast<float2 *>(deviceAddress<float>(args.output) + offset + n * 8) =
              make_float2(first, second);
      }
    }
}

} // namespace mk::gpu

#endif
