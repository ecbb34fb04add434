// A row of a short attention chunk, one warp a q head (the path
// AttentionChunkTask.cuh takes for chunks of at most 64 positions), and the
// row's description that every path of a chunk task reads.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONCHUNKWARPHEADS_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONCHUNKWARPHEADS_CUH

#include "codegen/device/AttentionHeads.cuh"
#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// One step row's part of a chunk task: its position, whether it runs, and
// where its q | k | v input, its sequence's caches and its partials are.
template <class Cache>
struct ChunkRow {
  long long position;
  bool active;
  const float *qkv;
  Cache *keys, *values; // the sequence's slots
  float *partials;
};

// A lane's dot products of q with kRows key rows, over the rows' 16-byte
// units, four running sums a row (dimensions mod 4) added as (0 + 1) +
// (2 + 3), q's shared reads serving every row: one sum a row was a chain of
// kHeadDim dependent FMAs (bench/NOTES.md, item 31: ~1% a token on the
// small shapes and the 1B shape).
template <int kRows, int kHeadDim, int kCacheBytes>
__device__ __forceinline__ void keyDots(
    const float *query, const typename BufferElementOf<kCacheBytes>::Type *const (&rows)[kRows],
    float *dots) {
  constexpr int kUnitElements = 16 / kCacheBytes;
  float sums[kRows][4];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    sums[r][0] = sums[r][1] = sums[r][2] = sums[r][3] = 0.0f;
#pragma unroll
  for (int unit = 0; unit < kHeadDim / kUnitElements; ++unit) {
    float key[kRows][kUnitElements];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      readUnit<kCacheBytes, kUnitElements>(rows[r] + unit * kUnitElements, key[r]);
#pragma unroll
    for (int i = 0; i < kUnitElements; i += 4) {
      const float4 q = *reinterpret_cast<const float4 *>(query + unit * kUnitElements + i);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        sums[r][0] = fmaf(q.x, key[r][i], sums[r][0]);
        sums[r][1] = fmaf(q.y, key[r][i + 1], sums[r][1]);
        sums[r][2] = fmaf(q.z, key[r][i + 2], sums[r][2]);
        sums[r][3] = fmaf(q.w, key[r][i + 3], sums[r][3]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    dots[r] = (sums[r][0] + sums[r][1]) + (sums[r][2] + sums[r][3]);
}

// A row of a chunk of at most 64 positions (core/protocol/SharedMemory.h:
// attentionChunkWarpHeads), one warp a q head of the group and no CTA
// barrier after the wait: at 16 positions a chunk's five stages (q, norm
// and rotation, scores, softmax, o) took ~0.2-0.6 us each, mostly the
// barriers and shared-memory round trips between them (bench/NOTES.md,
// item 26).
// Load: before the wait, the chunk's keys and values but this step's own
// row into shared memory by cp.async, from warps 1 on (the controller's
// warp 0 polls at once), each copier waiting for its copies before the
// wait's barrier hands them to every warp; and each lane's rotary
// frequencies. After it, each head warp's q, this step's k and v where the
// chunk holds the position or is chunk 0, and the norms' scales.
// Compute: a lane's consecutive dimensions of q (and k) normed (warp sums)
// and rotated (a pair's other half from the lane kHalf / kDims away, or the
// lane's next dimension where pairs are interleaved); q to the warp's
// shared words; then a lane a position (two where the chunk has more than
// 32): its score over the row's 16-byte units (keyDots); the softmax over
// the lanes; o over the positions, the weights read from the warp's words.
// Every sum has a fixed order.
// Store: chunk 0 this step's k and v (warp 0); each head's partials.
template <int kHeadDim, int kGroup, int kChunk, int kRotaryDim, int kCacheBytes, int kThreads,
          class AwaitInputs>
__device__ bool warpHeadsChunkRow(
    const TaskContext &context, const MkOperationRecord &op, const AwaitInputs &awaitInputs,
    const ChunkRow<typename BufferElementOf<kCacheBytes>::Type> &row, float *shared,
    unsigned tid, unsigned long long group, unsigned long long chunk, long long first, int count,
    bool newEntries, int newSlot) {
  using Element = BufferElementOf<kCacheBytes>;
  using Cache = typename Element::Type;
  using Layout = AttentionShape<kHeadDim, kGroup>;
  constexpr int kWarps = kThreads / kWarpSize;
  constexpr int kDims = kHeadDim / kWarpSize; // a lane's consecutive dimensions
  constexpr int kHalf = kRotaryDim / 2;
  constexpr int kRowBytes = static_cast<int>(attentionWarpHeadsRowBytes(kHeadDim, kCacheBytes));
  constexpr int kUnitElements = 16 / kCacheBytes;
  constexpr int kUnits = kHeadDim / kUnitElements; // 16-byte units a row
  constexpr int kSlots = (kChunk + kWarpSize - 1) / kWarpSize; // a lane's positions
  static_assert(kSlots <= 2 && kDims % 2 == 0 && kGroup <= kWarps && kWarps > 1,
                "two positions a lane at most, whole pairs a lane, a warp a head and copiers "
                "beside warp 0");
  static_assert(kHalf % kDims == 0, "a lane's rotary partners are one other lane's");
  const AttentionLayout layout = Layout::of(op);
  // Where the group's KV head keeps position t in the row's caches.
  auto cacheRow = [&](long long t) { return layout.cacheEntry(t, group, kKvCapacity); };
  float *queries = shared; // [kGroup][kHeadDim], normed and rotated
  char *keyRows = reinterpret_cast<char *>(
      shared + attentionChunkTeamFloats(kHeadDim, kGroup, kChunk, kCacheBytes));
  char *valueRows = keyRows + kChunk * kRowBytes;
  float *newRows = reinterpret_cast<float *>(valueRows + kChunk * kRowBytes); // [kGroup][2][kHeadDim]
  const int warp = tid / kWarpSize, lane = tid % kWarpSize, firstDim = lane * kDims;
  const bool headWarp = warp < kGroup;

  if (warp > 0) {
    for (int item = static_cast<int>(tid) - kWarpSize; item < 2 * count * kUnits;
         item += kThreads - kWarpSize) {
      const bool isValue = item >= count * kUnits;
      const int t = (isValue ? item - count * kUnits : item) / kUnits, unit = item % kUnits;
      if (t == newSlot)
        continue;
      const Cache *from = (isValue ? row.values : row.keys) +
                          cacheRow(first + t) + unit * kUnitElements;
      copyAsync16((isValue ? valueRows : keyRows) + t * kRowBytes + unit * 16, from, true);
    }
    copyWait();
  }
  float frequency[kDims];
#pragma unroll
  for (int j = 0; j < kDims; ++j) {
    frequency[j] = 0.0f;
    if constexpr (kHalf > 0) {
      const int d = firstDim + j;
      if (headWarp && d < kRotaryDim)
        frequency[j] = context.params[op.invFreq + (op.interleaved ? d / 2 : d % kHalf)];
    }
  }
  if (!awaitInputs())
    return false;
  if (!headWarp)
    return true;

  const float *qkv = row.qkv;
  const bool qNorm = op.qNorm != MK_NO_OFFSET, kNorm = newEntries && op.kNorm != MK_NO_OFFSET;
  float q[kDims], k[kDims], v[kDims], qScale[kDims], kScale[kDims];
#pragma unroll
  for (int j = 0; j < kDims; ++j) {
    const int d = firstDim + j;
    q[j] = qkv[layout.query(group) + warp * kHeadDim + d];
    k[j] = newEntries ? qkv[layout.key(group) + d] : 0.0f;
    v[j] = newEntries ? qkv[layout.value(group) + d] : 0.0f;
    qScale[j] = qNorm ? context.params[op.qNorm + d] : 1.0f;
    kScale[j] = kNorm ? context.params[op.kNorm + d] : 1.0f;
  }
  // The rotation's cosines and sines (cos and sin of the f32 angle
  // pos * invFreq[i], as PyTorch computes them), under the loads' latency.
  float cosine[kDims], sine[kDims];
#pragma unroll
  for (int j = 0; j < kDims; ++j)
    sincosf(static_cast<float>(row.position) * frequency[j], &sine[j], &cosine[j]);
  auto normHead = [&](float(&x)[kDims], const float(&scale)[kDims]) {
    float squares = 0.0f;
#pragma unroll
    for (int j = 0; j < kDims; ++j)
      squares += x[j] * x[j];
    const float variance = warpSum(squares) / static_cast<float>(kHeadDim);
    const float invRms = 1.0f / sqrtf(variance + op.eps);
#pragma unroll
    for (int j = 0; j < kDims; ++j)
      x[j] = (x[j] * invRms) * scale[j];
  };
  auto rotate = [&](float(&x)[kDims]) {
    if constexpr (kHalf > 0) {
      float partner[kDims];
      if (op.interleaved) {
#pragma unroll
        for (int j = 0; j < kDims; ++j)
          partner[j] = x[j ^ 1];
      } else {
        constexpr int kPartnerLanes = kHalf / kDims;
        const int source = firstDim < kHalf       ? lane + kPartnerLanes
                           : firstDim < kRotaryDim ? lane - kPartnerLanes
                                                   : lane;
#pragma unroll
        for (int j = 0; j < kDims; ++j)
          partner[j] = __shfl_sync(kFullMask, x[j], source);
      }
#pragma unroll
      for (int j = 0; j < kDims; ++j) {
        const int d = firstDim + j;
        const bool pairFirst = op.interleaved ? d % 2 == 0 : d < kHalf;
        if (d < kRotaryDim)
          x[j] = pairFirst ? x[j] * cosine[j] - partner[j] * sine[j]
                           : x[j] * cosine[j] + partner[j] * sine[j];
      }
    }
  };
  if (qNorm)
    normHead(q, qScale);
  rotate(q);
  float *ownQuery = queries + warp * kHeadDim;
  // This step's k and v in the caches' element, where the scores and o
  // read them as they read the copied rows.
  Cache *newKey = reinterpret_cast<Cache *>(newRows + warp * 2 * kHeadDim);
  Cache *newValue = reinterpret_cast<Cache *>(newRows + warp * 2 * kHeadDim + kHeadDim);
#pragma unroll
  for (int j = 0; j < kDims; ++j)
    ownQuery[firstDim + j] = q[j];
  if (newEntries) {
    // Every chunk attends to what the cache keeps, this step's entry too.
    if (kNorm)
      normHead(k, kScale);
    rotate(k);
#pragma unroll
    for (int j = 0; j < kDims; ++j) {
      newKey[firstDim + j] = Element::write(k[j] = Element::round(k[j]));
      newValue[firstDim + j] = Element::write(v[j] = Element::round(v[j]));
    }
    if (chunk == 0 && warp == 0)
#pragma unroll
      for (int j = 0; j < kDims; ++j) {
        row.keys[cacheRow(row.position) + firstDim + j] = Element::write(k[j]);
        row.values[cacheRow(row.position) + firstDim + j] = Element::write(v[j]);
      }
  }
  __syncwarp();

  // Compute: the scores of the lane's positions (lane, lane + 32), this
  // step's own row from the warp's words; a lane past the chunk reads one
  // of its rows (row 0 where it is empty) and drops the score. Both of a
  // lane's rows in one pass where the chunk has more than 32 positions.
  auto keyRow = [&](int t) {
    return t == newSlot ? newKey : reinterpret_cast<const Cache *>(keyRows + t * kRowBytes);
  };
  auto lanesRow = [&](int slot) { return keyRow(max(0, min(lane + slot * kWarpSize, count - 1))); };
  float dots[kSlots] = {};
  if (kSlots == 1 || count <= kWarpSize) {
    const Cache *rows[1] = {lanesRow(0)};
    keyDots<1, kHeadDim, kCacheBytes>(ownQuery, rows, dots);
  } else if constexpr (kSlots == 2) {
    const Cache *rows[2] = {lanesRow(0), lanesRow(1)};
    keyDots<2, kHeadDim, kCacheBytes>(ownQuery, rows, dots);
  }
  float score[kSlots], weight[kSlots];
  float lanesMax = negativeInfinity();
#pragma unroll
  for (int slot = 0; slot < kSlots; ++slot) {
    score[slot] = lane + slot * kWarpSize < count ? dots[slot] * op.scale : negativeInfinity();
    lanesMax = fmaxf(lanesMax, score[slot]);
  }
  // Compute: m, the weights exp(s - m) of the lane's positions, l.
  const float max = warpMax(lanesMax);
  float lanesSum = 0.0f;
#pragma unroll
  for (int slot = 0; slot < kSlots; ++slot) {
    weight[slot] = lane + slot * kWarpSize < count ? expf(score[slot] - max) : 0.0f;
    lanesSum += weight[slot];
  }
  const float sum = warpSum(lanesSum);
  // Compute: o, a lane's dimensions over the positions in order. The
  // weights go to the warp's q words (every lane's scores have read q), so
  // that one broadcast read gives o four positions' weights where a
  // shuffle a position stood; the positions past the chunk up to a whole
  // four weigh 0 on a row that holds data, which leaves o as it is.
  __syncwarp();
  float *weights = ownQuery;
#pragma unroll
  for (int slot = 0; slot < kSlots; ++slot)
    weights[lane + slot * kWarpSize] = weight[slot];
  __syncwarp();
  auto valueRow = [&](int t) {
    const int held = min(t, count - 1);
    return (held == newSlot ? newValue
                            : reinterpret_cast<const Cache *>(valueRows + held * kRowBytes)) +
           firstDim;
  };
  float o[kDims];
#pragma unroll
  for (int j = 0; j < kDims; ++j)
    o[j] = 0.0f;
#pragma unroll 2
  for (int t = 0; t < count; t += 4) {
    const float4 four = *reinterpret_cast<const float4 *>(weights + t);
    const float w[4] = {four.x, four.y, four.z, four.w};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const Cache *values = valueRow(t + u);
#pragma unroll
      for (int j = 0; j < kDims; ++j)
        o[j] = fmaf(w[u], Element::read(values[j]), o[j]);
    }
  }
  // Store: the head's partials [o, m, l].
  float *partial = row.partials + layout.partial(group * kGroup + warp, chunk);
#pragma unroll
  for (int j = 0; j < kDims; ++j)
    partial[firstDim + j] = o[j];
  if (lane == 0) {
    partial[Layout::kMax] = max;
    partial[Layout::kSum] = sum;
  }
  return true;
}

} // namespace mk::gpu

#endif
