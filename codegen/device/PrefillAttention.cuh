// Causal attention of a prompt's rows over the KV cache, on tensor cores
// (runtime/format/PrefillArgs.h): the rows' k and v are in the cache
// already (PrefillKernels.cuh's prepare), so row r attends to the slots
// [0, firstPosition + r] of its KV head, earlier prompts' and its own
// chunk's alike.
//
// A CTA takes MK_PREFILL_ATTENTION_ROWS query rows of one KV head, a
// query row being a prompt row and one q head of the head's group, so the
// group's heads share each staged block; a warp takes 16 of them. It walks
// the cache MK_PREFILL_ATTENTION_KEYS positions at a time up to its last
// row's position, as flash attention does: a running max and sum per row,
// o rescaled when the max grows; only blocks that reach past a warp's
// first row are masked. Load: the block's keys and values ([key][dim]) into
// shared memory as bf16, rows padded so that ldmatrix's eight rows hit 32
// banks. Compute: scores S = q k^T and o += P v by mma.m16n8k16, K's
// fragments by ldmatrix and V's by ldmatrix.trans; S's accumulators are,
// pair by pair, P's A fragments (the PTX ISA's layouts agree), so P never
// leaves registers. Store: o / l as f32 into the output row.
// The exponentials are exp2 of scores scaled by log2(e); sums are f32.
#ifndef MKC_CODEGEN_DEVICE_PREFILLATTENTION_CUH
#define MKC_CODEGEN_DEVICE_PREFILLATTENTION_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/PrefillKernels.cuh"

namespace mk::gpu {

// Eight consecutive f32 cache elements (two aligned 16-byte units: a
// slot's dimension d is a multiple of 8) as floats.
__device__ __forceinline__ void readEight(const float *from, float (&out)[8]) {
  readUnit<4, 4>(from, reinterpret_cast<float (&)[4]>(out[0]));
  readUnit<4, 4>(from + 4, reinterpret_cast<float (&)[4]>(out[4]));
}

// V's B fragments for one k16 step and two n8 tiles of o: ldmatrix's
// transposing load of four 8 x 8 tiles of V [key][dim] (rows k..k+7 and
// k+8..k+15 at dims n and n + 8), each lane giving one row's address.
__device__ __forceinline__ void loadValueFragments(const unsigned short *values, int stride,
                                                   int key, int dim, unsigned (&b)[4]) {
  const int lane = threadIdx.x % kWarpSize;
  const unsigned short *row =
      values + (key + (lane & 7) + ((lane >> 3) & 1) * 8) * stride + dim + (lane >> 4) * 8;
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
#endif
}

// K's B fragments for one k16 step and two n8 tiles of S: ldmatrix's load
// of four 8 x 8 tiles of K [key][dim] (keys n..n+7 at dims k and k + 8,
// then keys n+8..n+15 likewise), each lane giving one row's address.
__device__ __forceinline__ void loadKeyFragments(const unsigned short *keys, int stride, int key,
                                                 int dim, unsigned (&b)[4]) {
  const int lane = threadIdx.x % kWarpSize;
  const unsigned short *row =
      keys + (key + (lane & 7) + (lane >> 4) * 8) * stride + dim + ((lane >> 3) & 1) * 8;
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
#endif
}

template <int kHeadDim, int kCacheBytes>
__device__ void prefillAttention(const MkPrefillAttentionArgs &args) {
  using Element = BufferElementOf<kCacheBytes>;
  using Cache = typename Element::Type;
  constexpr int kKeys = MK_PREFILL_ATTENTION_KEYS;
  constexpr int kThreads = MK_PREFILL_ATTENTION_WARPS * kWarpSize;
  constexpr int kSteps = kHeadDim / 16;   // k16 steps of q . k
  constexpr int kDimTiles = kHeadDim / 8; // n8 tiles of o
  constexpr int kKeyTiles = kKeys / 8;    // n8 tiles of S
  constexpr int kStride = MK_PREFILL_ATTENTION_STRIDE(kHeadDim); // bf16 elements a staged row
  constexpr int kStage = kKeys * kStride;                        // one block's keys, or values
  constexpr int kChunks = kKeys * kHeadDim / 8;                  // 16-byte bf16 units a block's keys
  static_assert(kHeadDim % 16 == 0 && kHeadDim <= MK_PREFILL_MAX_HEAD_DIM,
                "heads of whole k16 steps, within the registers");
  static_assert(MK_PREFILL_ATTENTION_ROWS == 16 * MK_PREFILL_ATTENTION_WARPS, "16 rows a warp");
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
  const int warpRow = tileRow + warp * 16;
  const int firstPosition = static_cast<int>(args.firstPosition);
  const int lastPosition =
      firstPosition + (min(tileRow + MK_PREFILL_ATTENTION_ROWS, queryRows) - 1) / group;
  const int warpFirst = firstPosition + min(warpRow, queryRows - 1) / group;
  const int warpLast = firstPosition + min(warpRow + 15, queryRows - 1) / group;
  const Cache *keyCache = deviceAddress<const Cache>(args.keyCache);
  const Cache *valueCache = deviceAddress<const Cache>(args.valueCache);
  const float scale = args.scale * 1.44269504088896340736f; // log2(e)

  // Load: block `block`'s keys and values into stage block % 2; positions
  // past the tile's last are zeros (masked below). A bf16 cache's rows go
  // by cp.async (one commit group a block); an f32 one's are widened and
  // rounded here.
  auto stage = [&](int block) {
    unsigned short *keys = staged + (block % 2) * 2 * kStage, *values = keys + kStage;
    for (int c = threadIdx.x; c < kChunks; c += kThreads) {
      const int key = c / (kHeadDim / 8), d = (c % (kHeadDim / 8)) * 8;
      const int position = block * kKeys + key;
      const bool inside = position <= lastPosition;
      const unsigned long long slot =
          (static_cast<unsigned long long>(inside ? position : 0) * args.numKvHeads + kvHead) *
              kHeadDim + d;
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

  // Load: this warp's q rows as A fragments (rows past the prompt read its
  // last row and are never stored).
  unsigned q[kSteps][4];
  {
    const unsigned short *queries = deviceAddress<const unsigned short>(args.queries);
    const unsigned short *q0 = queries + rowOffset(min(warpRow + g, queryRows - 1));
    const unsigned short *q1 = queries + rowOffset(min(warpRow + g + 8, queryRows - 1));
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int d = k * 16 + 2 * t;
      q[k][0] = *reinterpret_cast<const unsigned *>(q0 + d);
      q[k][1] = *reinterpret_cast<const unsigned *>(q1 + d);
      q[k][2] = *reinterpret_cast<const unsigned *>(q0 + d + 8);
      q[k][3] = *reinterpret_cast<const unsigned *>(q1 + d + 8);
    }
  }
  const int position0 = firstPosition + (warpRow + g) / group;
  const int position1 = firstPosition + (warpRow + g + 8) / group;
  float o[kDimTiles][4];
#pragma unroll
  for (int n = 0; n < kDimTiles; ++n)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float max0 = negativeInfinity(), max1 = negativeInfinity(), sum0 = 0.0f, sum1 = 0.0f;

  const int blocks = lastPosition / kKeys + 1;
  if constexpr (kCacheBytes == 2)
    stage(0);
  for (int block = 0; block < blocks; ++block) {
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
    // A warp whose rows all precede the block (or that has no rows) has
    // nothing in it.
    if (firstKey > warpLast || warpRow >= queryRows)
      continue;
    const unsigned short *keys = staged + (block % 2) * 2 * kStage, *values = keys + kStage;

    // Compute: S = q k^T, scaled to log2 units; masked past each row where
    // the block reaches past the warp's first row.
    float s[kKeyTiles][4];
#pragma unroll
    for (int n = 0; n < kKeyTiles; n += 2) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        s[n][i] = s[n + 1][i] = 0.0f;
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        unsigned b[4];
        loadKeyFragments(keys, kStride, n * 8, k * 16, b);
        mma16816(s[n], q[k][0], q[k][1], q[k][2], q[k][3], b[0], b[1]);
        mma16816(s[n + 1], q[k][0], q[k][1], q[k][2], q[k][3], b[2], b[3]);
      }
    }
    const bool masked = firstKey + kKeys - 1 > warpFirst;
    float blockMax0 = negativeInfinity(), blockMax1 = negativeInfinity();
#pragma unroll
    for (int n = 0; n < kKeyTiles; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int key = firstKey + n * 8 + 2 * t + (i & 1);
        const bool upper = i >= 2;
        const bool visible = !masked || key <= (upper ? position1 : position0);
        s[n][i] = visible ? s[n][i] * scale : negativeInfinity();
        if (upper)
          blockMax1 = fmaxf(blockMax1, s[n][i]);
        else
          blockMax0 = fmaxf(blockMax0, s[n][i]);
      }
#pragma unroll
    for (int offset = 1; offset < 4; offset *= 2) {
      blockMax0 = fmaxf(blockMax0, __shfl_xor_sync(kFullMask, blockMax0, offset));
      blockMax1 = fmaxf(blockMax1, __shfl_xor_sync(kFullMask, blockMax1, offset));
    }
    // The running max; a row that has seen no position yet keeps -inf and
    // weighs everything 0.
    const float newMax0 = fmaxf(max0, blockMax0), newMax1 = fmaxf(max1, blockMax1);
    const float base0 = newMax0 == negativeInfinity() ? 0.0f : newMax0;
    const float base1 = newMax1 == negativeInfinity() ? 0.0f : newMax1;
    const float rescale0 = exp2f(max0 - base0), rescale1 = exp2f(max1 - base1);
    max0 = newMax0;
    max1 = newMax1;
    sum0 *= rescale0;
    sum1 *= rescale1;
#pragma unroll
    for (int n = 0; n < kDimTiles; ++n) {
      o[n][0] *= rescale0;
      o[n][1] *= rescale0;
      o[n][2] *= rescale1;
      o[n][3] *= rescale1;
    }
#pragma unroll
    for (int n = 0; n < kKeyTiles; ++n) {
      s[n][0] = exp2f(s[n][0] - base0);
      s[n][1] = exp2f(s[n][1] - base0);
      s[n][2] = exp2f(s[n][2] - base1);
      s[n][3] = exp2f(s[n][3] - base1);
      sum0 += s[n][0] + s[n][1];
      sum1 += s[n][2] + s[n][3];
    }
    // Compute: o += P v, a k16 step being two of S's n8 tiles.
#pragma unroll
    for (int k = 0; k < kKeys / 16; ++k) {
      const unsigned p0 = packBf16(s[2 * k][0], s[2 * k][1]);
      const unsigned p1 = packBf16(s[2 * k][2], s[2 * k][3]);
      const unsigned p2 = packBf16(s[2 * k + 1][0], s[2 * k + 1][1]);
      const unsigned p3 = packBf16(s[2 * k + 1][2], s[2 * k + 1][3]);
#pragma unroll
      for (int n = 0; n < kDimTiles; n += 2) {
        unsigned b[4];
        loadValueFragments(values, kStride, k * 16, n * 8, b);
        mma16816(o[n], p0, p1, p2, p3, b[0], b[1]);
        mma16816(o[n + 1], p0, p1, p2, p3, b[2], b[3]);
      }
    }
  }
  copyWait();

  // Store: o / l, the lanes of a row group adding their parts of l.
#pragma unroll
  for (int offset = 1; offset < 4; offset *= 2) {
    sum0 += __shfl_xor_sync(kFullMask, sum0, offset);
    sum1 += __shfl_xor_sync(kFullMask, sum1, offset);
  }
  float *output = deviceAddress<float>(args.output);
  const int m0 = warpRow + g, m1 = m0 + 8;
  float *out0 = output + rowOffset(min(m0, queryRows - 1));
  float *out1 = output + rowOffset(min(m1, queryRows - 1));
#pragma unroll
  for (int n = 0; n < kDimTiles; ++n) {
    const int d = n * 8 + 2 * t;
    if (m0 < queryRows)
      *reinterpret_cast<float2 *>(out0 + d) = make_float2(o[n][0] / sum0, o[n][1] / sum0);
    if (m1 < queryRows)
      *reinterpret_cast<float2 *>(out1 + d) = make_float2(o[n][2] / sum1, o[n][3] / sum1);
  }
}

} // namespace mk::gpu

#endif
