// AttentionChunk (g, c) (runtime/cpu/AttentionChunkTask.cpp): for each q
// head of group g, over positions [c * kChunk, (c + 1) * kChunk) up to the
// step's own, the max m of the scores s = (q . k) * scale, l = sum exp(s - m)
// and o = sum exp(s - m) v. A chunk past the position is empty: m = -inf,
// l = 0, o = 0.
//
// Load: the group's roped q into shared memory.
// Compute: scores, one warp per position (each lane a slice of the key, all
// q heads of the group against it); then one warp per head for m, the
// exponentials and l; then one thread per (head, dimension) for o.
// Store: the partials [o, m, l] of each head.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONCHUNKTASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONCHUNKTASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"

namespace mk::gpu {

// Floats of shared memory the task needs.
__host__ __device__ constexpr int attentionChunkShared(int headDim, int group, int chunk) {
  return group * headDim + group * chunk + 2 * group;
}

template <int kHeadDim, int kGroup, int kChunk, int kThreads>
__device__ void attentionChunkTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op) {
  using Layout = AttentionLayout<kHeadDim, kGroup>;
  constexpr int kWarps = kThreads / kWarpSize;
  constexpr int kSlices = (kHeadDim + kWarpSize - 1) / kWarpSize;
  unsigned long long group = task.begin, chunk = task.end;
  long long first = static_cast<long long>(chunk) * kChunk;
  long long last = min(first + kChunk, context.position + 1);
  int count = last > first ? static_cast<int>(last - first) : 0;
  float *queries = context.shared;                  // [kGroup][kHeadDim]
  float *scores = queries + Layout::kGroupLength;   // [kGroup][kChunk]
  float *maxima = scores + kGroup * kChunk;         // [kGroup]
  float *sums = maxima + kGroup;                    // [kGroup]
  const float *keys = context.kv + op.keyCache;
  const float *values = context.kv + op.valueCache;
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  // Load.
  for (int i = threadIdx.x; i < Layout::kGroupLength; i += kThreads)
    queries[i] = context.activations[op.roped + Layout::query(group) + i];
  __syncthreads();

  // Compute: scores.
  for (int t = warp; t < count; t += kWarps) {
    const float *key = keys + Layout::slot(op, first + t, group);
    float slice[kSlices];
#pragma unroll
    for (int s = 0; s < kSlices; ++s) {
      int d = lane + s * kWarpSize;
      slice[s] = d < kHeadDim ? key[d] : 0.0f;
    }
#pragma unroll
    for (int head = 0; head < kGroup; ++head) {
      float dot = 0.0f;
#pragma unroll
      for (int s = 0; s < kSlices; ++s) {
        int d = lane + s * kWarpSize;
        if (d < kHeadDim)
          dot = fmaf(queries[head * kHeadDim + d], slice[s], dot);
      }
      dot = warpSum(dot);
      if (lane == 0)
        scores[head * kChunk + t] = dot * op.scale;
    }
  }
  __syncthreads();

  // Compute: per head, the max, the weights exp(s - m) in place, their sum.
  for (int head = warp; head < kGroup; head += kWarps) {
    float *headScores = scores + head * kChunk;
    float max = negativeInfinity();
    for (int t = lane; t < count; t += kWarpSize)
      max = fmaxf(max, headScores[t]);
    max = warpMax(max);
    float sum = 0.0f;
    for (int t = lane; t < count; t += kWarpSize) {
      float weight = expf(headScores[t] - max);
      headScores[t] = weight;
      sum += weight;
    }
    sum = warpSum(sum);
    if (lane == 0) {
      maxima[head] = max;
      sums[head] = sum;
    }
  }
  __syncthreads();

  // Compute and store: o, then m and l.
  float *partials = context.activations + op.partials;
  for (int i = threadIdx.x; i < Layout::kGroupLength; i += kThreads) {
    int head = i / kHeadDim, d = i % kHeadDim;
    const float *weights = scores + head * kChunk;
    float weighted = 0.0f;
    for (int t = 0; t < count; ++t)
      weighted = fmaf(weights[t], values[Layout::slot(op, first + t, group) + d], weighted);
    partials[Layout::partial(op, group * kGroup + head, chunk) + d] = weighted;
  }
  for (int head = threadIdx.x; head < kGroup; head += kThreads) {
    float *partial = partials + Layout::partial(op, group * kGroup + head, chunk);
    partial[Layout::kMax] = maxima[head];
    partial[Layout::kSum] = sums[head];
  }
}

} // namespace mk::gpu

#endif
