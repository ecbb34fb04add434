// The row-wise kernels of a prompt run layer by layer
// (runtime/format/PrefillArgs.h, docs/m-token-steps.md): every row of the
// prompt at once, one launch an operation's part, where the decode kernel
// takes one row a step. The matrices go through the library GEMMs between
// them (runtime/gpu/Prefill.cpp); attention is PrefillAttention.cuh.
//
// Each kernel is load, compute, store for one row (or one row's heads):
// embed widens the token's table row; norm writes the GEMM's input row as
// bf16 (RMSNorm first where the Gemv has one, in HF's order, as the CPU
// reference's kernels::rmsNorm); epilogue adds the bias and applies the
// Gemv's epilogue to the GEMMs' products, and where the next Gemv (one
// without a norm) reads the result writes that Gemv's input too; prepare head-norms and rotates q
// and k as the decode chunk does and writes k and v into the KV cache.
#ifndef MKC_CODEGEN_DEVICE_PREFILLKERNELS_CUH
#define MKC_CODEGEN_DEVICE_PREFILLKERNELS_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Picks.cuh"
#include "core/protocol/AttentionLayout.h"
#include "runtime/format/PrefillArgs.h"
#include "runtime/format/ScheduleBlob.h"

namespace mk::gpu {

template <class T> __device__ __forceinline__ T *deviceAddress(mk_u64 address) {
  return reinterpret_cast<T *>(address);
}

__device__ void prefillEmbed(const MkPrefillEmbedArgs &args) {
  const unsigned long long r = blockIdx.x;
  const long long token = deviceAddress<const long long>(args.tokens)[r];
  const unsigned short *row = deviceAddress<const unsigned short>(args.table) + token * args.hidden;
  float *out = deviceAddress<float>(args.output) + r * args.hidden;
  for (unsigned long long j = threadIdx.x; j < args.hidden; j += blockDim.x)
    out[j] = bf16ToFloat(row[j]);
}

// Whether rows of `length` f32 at these addresses go four a 16-byte load
// (every address 16-byte aligned or 0, the length a multiple of 4); else
// the same elements one at a time.
template <class... Addresses>
__device__ __forceinline__ bool inFours(unsigned long long length, Addresses... addresses) {
  return length % 4 == 0 && ((addresses % 16 == 0) && ...);
}

// Four bf16 (8 bytes) from four floats.
__device__ __forceinline__ void storeFourBf16(unsigned short *to, float4 v) {
  *reinterpret_cast<uint2 *>(to) = make_uint2(packBf16(v.x, v.y), packBf16(v.z, v.w));
}

// Each thread takes units of four elements, unit u at u * 4, strided by the
// block.
__device__ void prefillNorm(const MkPrefillNormArgs &args) {
  const unsigned long long r = blockIdx.x, length = args.length;
  const float *in = deviceAddress<const float>(args.input) + r * length;
  unsigned short *out = deviceAddress<unsigned short>(args.output) + r * length;
  const float *norm = deviceAddress<const float>(args.norm);
  const bool fours = inFours(length, args.input, args.norm) && args.output % 8 == 0;
  auto load = [&](const float *row, unsigned long long j) {
    return fours ? *reinterpret_cast<const float4 *>(row + j)
                 : make_float4(row[j], j + 1 < length ? row[j + 1] : 0.0f,
                               j + 2 < length ? row[j + 2] : 0.0f,
                               j + 3 < length ? row[j + 3] : 0.0f);
  };
  float invRms = 1.0f;
  if (norm) {
    float squares = 0.0f;
    for (unsigned long long j = 4 * threadIdx.x; j < length; j += 4 * blockDim.x) {
      const float4 x = load(in, j);
      squares += x.x * x.x + x.y * x.y + x.z * x.z + x.w * x.w;
    }
    const float variance = blockSum<MK_PREFILL_THREADS>(squares) / static_cast<float>(length);
    invRms = 1.0f / sqrtf(variance + args.eps);
  }
  for (unsigned long long j = 4 * threadIdx.x; j < length; j += 4 * blockDim.x) {
    float4 x = load(in, j);
    if (norm) {
      const float4 g = load(norm, j);
      x = make_float4((x.x * invRms) * g.x, (x.y * invRms) * g.y, (x.z * invRms) * g.z,
                      (x.w * invRms) * g.w);
    }
    if (fours) {
      storeFourBf16(out + j, x);
    } else {
      const float values[4] = {x.x, x.y, x.z, x.w};
      for (int e = 0; e < 4 && j + e < length; ++e)
        out[j + e] = floatToBf16(values[e]);
    }
  }
}

// Four consecutive products from `index` on, f32 or bf16; `aligned`: one
// 16-byte (f32) or 8-byte (bf16) load.
__device__ __forceinline__ float4 loadFourProducts(unsigned long long base, bool bf16,
                                                   unsigned long long index, bool aligned) {
  if (bf16) {
    const unsigned short *from = deviceAddress<const unsigned short>(base) + index;
    if (aligned) {
      const uint2 pair = *reinterpret_cast<const uint2 *>(from);
      return make_float4(bf16Low(pair.x), bf16High(pair.x), bf16Low(pair.y), bf16High(pair.y));
    }
    return make_float4(bf16ToFloat(from[0]), bf16ToFloat(from[1]), bf16ToFloat(from[2]),
                       bf16ToFloat(from[3]));
  }
  const float *from = deviceAddress<const float>(base) + index;
  return aligned ? *reinterpret_cast<const float4 *>(from)
                 : make_float4(from[0], from[1], from[2], from[3]);
}

// A thread takes four consecutive elements of the row.
__device__ void prefillEpilogue(const MkPrefillEpilogueArgs &args) {
  const unsigned long long r = blockIdx.y, length = args.length;
  const unsigned long long j = 4 * (blockIdx.x * static_cast<unsigned long long>(blockDim.x) +
                                    threadIdx.x);
  if (j >= length)
    return;
  const bool bf16Products = args.bf16Products != 0;
  const unsigned long long productRow = r * args.productStride;
  const float *bias = deviceAddress<const float>(args.bias);
  const float *residual = deviceAddress<const float>(args.residual) + r * length;
  float *output = deviceAddress<float>(args.output) + r * length;
  unsigned short *gemmInput = deviceAddress<unsigned short>(args.gemmInput) + r * length;
  const bool fours = inFours(length, args.bias, args.residual, args.output) &&
                     args.products % (bf16Products ? 8 : 16) == 0 &&
                     args.productStride % 4 == 0 && args.gemmInput % 8 == 0;
  // Load.
  float y[4], gate[4] = {}, extra[4] = {};
  if (fours) {
    const float4 p = loadFourProducts(args.products, bf16Products, productRow + j, true);
    y[0] = p.x, y[1] = p.y, y[2] = p.z, y[3] = p.w;
    if (bias) {
      const float4 b = *reinterpret_cast<const float4 *>(bias + j);
      y[0] += b.x, y[1] += b.y, y[2] += b.z, y[3] += b.w;
    }
    if (MK_EPILOGUE_GATED(args.epilogue)) {
      const float4 u = loadFourProducts(args.products, bf16Products, productRow + length + j, true);
      gate[0] = u.x, gate[1] = u.y, gate[2] = u.z, gate[3] = u.w;
      if (bias) {
        const float4 b = *reinterpret_cast<const float4 *>(bias + length + j);
        gate[0] += b.x, gate[1] += b.y, gate[2] += b.z, gate[3] += b.w;
      }
    } else if (args.epilogue == MK_EPILOGUE_RESIDUAL) {
      const float4 x = *reinterpret_cast<const float4 *>(residual + j);
      extra[0] = x.x, extra[1] = x.y, extra[2] = x.z, extra[3] = x.w;
    }
  } else {
    auto product = [&](unsigned long long index) {
      return bf16Products
                 ? bf16ToFloat(deviceAddress<const unsigned short>(args.products)[productRow + index])
                 : deviceAddress<const float>(args.products)[productRow + index];
    };
    for (int e = 0; e < 4 && j + e < length; ++e) {
      y[e] = product(j + e) + (bias ? bias[j + e] : 0.0f);
      if (MK_EPILOGUE_GATED(args.epilogue))
        gate[e] = product(length + j + e) + (bias ? bias[length + j + e] : 0.0f);
      else if (args.epilogue == MK_EPILOGUE_RESIDUAL)
        extra[e] = residual[j + e];
    }
  }
  // Compute.
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (args.epilogue == MK_EPILOGUE_SILU_MUL)
      y[e] = gateActivation<MK_EPILOGUE_SILU_MUL>(y[e]) * gate[e];
    else if (args.epilogue == MK_EPILOGUE_GELU_TANH_MUL)
      y[e] = gateActivation<MK_EPILOGUE_GELU_TANH_MUL>(y[e]) * gate[e];
    else if (args.epilogue == MK_EPILOGUE_RESIDUAL)
      y[e] = extra[e] + y[e];
  }
  // Store.
  if (fours) {
    if (args.output)
      *reinterpret_cast<float4 *>(output + j) = make_float4(y[0], y[1], y[2], y[3]);
    if (args.gemmInput)
      storeFourBf16(gemmInput + j, make_float4(y[0], y[1], y[2], y[3]));
  } else {
    for (int e = 0; e < 4 && j + e < length; ++e) {
      if (args.output)
        output[j + e] = y[e];
      if (args.gemmInput)
        gemmInput[j + e] = floatToBf16(y[e]);
    }
  }
}

// One warp a head of one row: q heads [0, numHeads), then k, then v.
template <int kHeadDim, int kCacheBytes>
__device__ void prefillPrepare(const MkPrefillPrepareArgs &args) {
  using Element = BufferElementOf<kCacheBytes>;
  using Cache = typename Element::Type;
  constexpr int kPerLane = (kHeadDim + kWarpSize - 1) / kWarpSize;
  __shared__ float heads[MK_PREFILL_PREPARE_HEADS][kHeadDim];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const unsigned long long r = blockIdx.y;
  const unsigned long long head = blockIdx.x * MK_PREFILL_PREPARE_HEADS + warp;
  const unsigned long long numHeads = args.numHeads, numKvHeads = args.numKvHeads;
  if (head >= numHeads + 2 * numKvHeads)
    return;
  const bool query = head < numHeads, key = !query && head < numHeads + numKvHeads;
  const long long position = args.firstPosition + static_cast<long long>(r);
  float *x = heads[warp];
  // Load.
  const float *in =
      deviceAddress<const float>(args.qkv) + r * (numHeads + 2 * numKvHeads) * kHeadDim + head * kHeadDim;
  for (int d = lane; d < kHeadDim; d += kWarpSize)
    x[d] = in[d];
  __syncwarp();
  // Compute: the head norm, then the rotary pairs (PyTorch's f32 angle).
  const float *norm = deviceAddress<const float>(query ? args.qNorm : key ? args.kNorm : 0);
  if (norm) {
    float squares = 0.0f;
    for (int d = lane; d < kHeadDim; d += kWarpSize)
      squares += x[d] * x[d];
    const float invRms = 1.0f / sqrtf(warpSum(squares) / static_cast<float>(kHeadDim) + args.eps);
    __syncwarp();
    for (int d = lane; d < kHeadDim; d += kWarpSize)
      x[d] = (x[d] * invRms) * norm[d];
    __syncwarp();
  }
  const int half = static_cast<int>(args.rotaryDim / 2);
  if ((query || key) && half > 0) {
    const float *invFreq = deviceAddress<const float>(args.invFreq);
    float first[kPerLane], second[kPerLane];
    for (int k = 0; k < kPerLane; ++k) {
      const int i = lane + k * kWarpSize;
      if (i < half) {
        const int a = args.interleaved ? 2 * i : i, b = args.interleaved ? 2 * i + 1 : i + half;
        float sine, cosine;
        sincosf(static_cast<float>(position) * invFreq[i], &sine, &cosine);
        first[k] = x[a] * cosine - x[b] * sine;
        second[k] = x[b] * cosine + x[a] * sine;
      }
    }
    __syncwarp();
    for (int k = 0; k < kPerLane; ++k) {
      const int i = lane + k * kWarpSize;
      if (i < half) {
        x[args.interleaved ? 2 * i : i] = first[k];
        x[args.interleaved ? 2 * i + 1 : i + half] = second[k];
      }
    }
    __syncwarp();
  }
  // Store: q for the attention kernel; k and v into the slot at the
  // position, as the decode kernel's chunk 0 writes them.
  if (query) {
    unsigned short *out = deviceAddress<unsigned short>(args.queries) + (r * numHeads + head) * kHeadDim;
    for (int d = lane; d < kHeadDim; d += kWarpSize)
      out[d] = floatToBf16(x[d]);
    return;
  }
  const unsigned long long kvHead = key ? head - numHeads : head - numHeads - numKvHeads;
  const AttentionLayout layout{numHeads, numKvHeads, kHeadDim, 0, 0};
  Cache *slot = deviceAddress<Cache>(key ? args.keyCache : args.valueCache) +
                layout.cacheEntry(position, kvHead, args.capacity);
  for (int d = lane; d < kHeadDim; d += kWarpSize)
    slot[d] = Element::write(x[d]);
}

// The greedy pick of one logits row, as the decode kernel's argmax picks
// (Picks.cuh): the largest finite logit, of equals the lowest index; and
// apart, the lowest non-finite index, which the host reports as the
// kernel's MK_ERROR_NON_FINITE_LOGIT. Each thread scans a strided share in
// increasing order, so its first largest is its lowest.
__device__ void prefillArgmax(const MkPrefillArgmaxArgs &args) {
  const float *logits = deviceAddress<const float>(args.logits);
  Candidate best{negativeInfinity(), kNoIndex};
  unsigned nonFinite = kNoIndex;
  for (unsigned long long i = threadIdx.x; i < args.vocab; i += MK_PREFILL_ARGMAX_THREADS)
    considerPick(best, nonFinite, logits[i], i);
  best = blockPick<MK_PREFILL_ARGMAX_THREADS>(best, nonFinite);
  if (threadIdx.x != 0)
    return;
  unsigned *picked = deviceAddress<unsigned>(args.picked);
  picked[0] = best.index;
  picked[1] = nonFinite;
}

} // namespace mk::gpu

#endif
