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

__device__ void prefillNorm(const MkPrefillNormArgs &args) {
  const unsigned long long r = blockIdx.x;
  const float *in = deviceAddress<const float>(args.input) + r * args.length;
  unsigned short *out = deviceAddress<unsigned short>(args.output) + r * args.length;
  const float *norm = deviceAddress<const float>(args.norm);
  float invRms = 1.0f;
  if (norm) {
    float squares = 0.0f;
    for (unsigned long long j = threadIdx.x; j < args.length; j += blockDim.x)
      squares += in[j] * in[j];
    const float variance = blockSum<MK_PREFILL_THREADS>(squares) / static_cast<float>(args.length);
    invRms = 1.0f / sqrtf(variance + args.eps);
  }
  for (unsigned long long j = threadIdx.x; j < args.length; j += blockDim.x)
    out[j] = floatToBf16(norm ? (in[j] * invRms) * norm[j] : in[j]);
}

__device__ void prefillEpilogue(const MkPrefillEpilogueArgs &args) {
  const unsigned long long r = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= args.length)
    return;
  const float *products = deviceAddress<const float>(args.products) + r * args.productStride;
  const float *bias = deviceAddress<const float>(args.bias);
  auto product = [&](unsigned long long i) { return products[i] + (bias ? bias[i] : 0.0f); };
  float value = product(j);
  if (args.epilogue == MK_EPILOGUE_SILU_MUL)
    value = value / (1.0f + expf(-value)) * product(args.length + j);
  else if (args.epilogue == MK_EPILOGUE_RESIDUAL)
    value = deviceAddress<const float>(args.residual)[r * args.length + j] + value;
  if (args.output)
    deviceAddress<float>(args.output)[r * args.length + j] = value;
  if (args.gemmInput)
    deviceAddress<unsigned short>(args.gemmInput)[r * args.length + j] = floatToBf16(value);
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
  Cache *slot = deviceAddress<Cache>(key ? args.keyCache : args.valueCache) +
                (static_cast<unsigned long long>(position) * numKvHeads + kvHead) * kHeadDim;
  for (int d = lane; d < kHeadDim; d += kWarpSize)
    slot[d] = Element::write(x[d]);
}

// The greedy pick of one logits row, as the decode kernel's argmax picks
// (Picks.cuh): the largest finite logit, of equals the lowest index; and
// apart, the lowest non-finite index, which the host reports as the
// kernel's MK_ERROR_NON_FINITE_LOGIT. Each thread scans a strided share in
// increasing order, so its first largest is its lowest.
__device__ void prefillArgmax(const MkPrefillArgmaxArgs &args) {
  constexpr int kThreads = MK_PREFILL_ARGMAX_THREADS;
  __shared__ Candidate warpBests[kThreads / kWarpSize];
  __shared__ unsigned warpNonFinite[kThreads / kWarpSize];
  const float *logits = deviceAddress<const float>(args.logits);
  Candidate best{negativeInfinity(), kNoIndex};
  unsigned nonFinite = kNoIndex;
  for (unsigned long long i = threadIdx.x; i < args.vocab; i += kThreads)
    considerPick(best, nonFinite, logits[i], i);
  nonFinite = warpLowest(nonFinite);
  if (threadIdx.x % kWarpSize == 0)
    warpNonFinite[threadIdx.x / kWarpSize] = nonFinite;
  best = blockBest<kThreads>(best, warpBests); // its barrier publishes warpNonFinite
  if (threadIdx.x != 0)
    return;
  for (int w = 0; w < kThreads / kWarpSize; ++w)
    nonFinite = min(nonFinite, warpNonFinite[w]);
  unsigned *picked = deviceAddress<unsigned>(args.picked);
  picked[0] = best.index;
  picked[1] = nonFinite;
}

} // namespace mk::gpu

#endif
