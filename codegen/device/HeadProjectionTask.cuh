// HeadProjection: rows [r0, r1) of o_proj's columns of q head h, times that
// head's attention output merged from its chunks' partials, added into the
// Fixed64 output (runtime/cpu/HeadProjectionTask.cpp; the tile:
// core/protocol/AttentionLayout.h).
//
// Load, before the wait: the tile's first passes of weights into registers
// (weights never change in a launch, so they stream through the wait).
// Load: the head's chunks in use, copied into shared memory (cp.async,
// 8-byte pieces: a head's partials start 8-byte aligned, headDim + 2 even).
// Compute, the merge: warp 0 puts each chunk's weight in place of its max
// (GemvTask.cuh: weighHeadChunks, as a Gemv merging every head does); then
// the threads, in groups over the chunks, sum each element's weighted o,
// and the groups' sums are added in group order, so every run gives the
// same bits.
// Compute, the projection: kRowLanes lanes a row, one 16-byte unit of its
// head's columns each, summed by shuffles of a fixed shape.
// Store: each row's sum rounded to fixed point and added with one 64-bit
// atomic (a RED: nothing waits for it); the sum over the heads is exact, so
// any order of the adds gives the same bits (core/protocol/FixedPoint.h).
// The task's trigger releases them with the rest of its writes.
#ifndef MKC_CODEGEN_DEVICE_HEADPROJECTIONTASK_CUH
#define MKC_CODEGEN_DEVICE_HEADPROJECTIONTASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/GemvTask.cuh"
#include "codegen/device/MlpTask.cuh"
#include "core/protocol/FixedPoint.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Head `head`'s output, merged from its chunks in use, into merged[0,
// kHeadDim). False (an error raised) when the graph uses more chunks than
// the code generator sized the staging for.
template <int kHeadDim, int kChunks, int kThreads>
__device__ bool mergeOneHead(const TaskContext &context, const MkOperationRecord &op,
                             unsigned head, float *staged, float *sums, float *merged) {
  constexpr int kLength = kHeadDim + 2;
  constexpr int kGroups = kThreads / kHeadDim;
  static_assert(kGroups >= 1 && kGroups * kHeadDim <= MK_HEAD_PROJECTION_MOST_THREADS,
                "the groups' sums fit what core/protocol/SharedMemory.h reserves");
  const int chunks = static_cast<int>(attentionWindowChunksInUse(
      context.position, op.window, op.chunksPerRound, op.numChunks, op.chunkSize));
  if (chunks > kChunks || chunks > 2 * kWarpSize) {
    if (threadIdx.x == 0)
      raiseError(context, MK_ERROR_UNKNOWN_VARIANT, chunks);
    return false;
  }
  // Load: chunks [0, chunks) of the head, contiguous in the partials.
  const float *partials =
      context.activations + op.input + static_cast<long long>(head) * op.numChunks * kLength;
#pragma unroll 1
  for (int u = threadIdx.x; u < chunks * kLength / 2; u += kThreads)
    copyAsync8(staged + 2 * u, partials + 2 * u);
  copyCommit();
  copyWait();
  consumerSync<kThreads>();
  // Compute: the chunks' weights, in place of their maxima.
  if (threadIdx.x < kWarpSize)
    weighHeadChunks(context, staged, chunks, kHeadDim, head);
  consumerSync<kThreads>();
  // Compute: element d of group g over chunks g, g + kGroups, ...
  const int d = threadIdx.x % kHeadDim, group = threadIdx.x / kHeadDim;
  if (group < kGroups) {
    float value = 0.0f;
#pragma unroll 1
    for (int c = group; c < chunks; c += kGroups)
      value = fmaf(staged[c * kLength + d], staged[c * kLength + kHeadDim], value);
    sums[group * kHeadDim + d] = value;
  }
  consumerSync<kThreads>();
  if (threadIdx.x < kHeadDim) {
    float value = 0.0f;
#pragma unroll 4
    for (int g = 0; g < kGroups; ++g)
      value += sums[g * kHeadDim + d];
    merged[d] = value;
  }
  consumerSync<kThreads>();
  return true;
}

// kTileRows: the operation's rows a tile (its sliceWidth); kChunks: its
// attention's chunks, what the staging holds.
template <int kHeadDim, int kTileRows, int kChunks, int kThreads, int kLoadsInFlight,
          class AwaitInputs>
__device__ void headProjectionTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  static_assert(kHeadDim % 8 == 0 && kHeadDim <= 8 * kWarpSize,
                "a row's head columns are whole 16-byte units, at most a warp's");
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  constexpr int kUnits = kHeadDim / 8;
  constexpr int kRowLanes = mlpRowLanes(kUnits);
  constexpr int kRowsPerPass = kThreads / kRowLanes;
  constexpr int kPasses = (kTileRows + kRowsPerPass - 1) / kRowsPerPass;
  constexpr int kEarly = kPasses < kLoadsInFlight ? kPasses : kLoadsInFlight;
  const unsigned head = headTileHead<unsigned>(task.begin);
  const unsigned first = headTileRow<unsigned>(task.begin);
  const unsigned rows = headTileRow<unsigned>(task.end) - first;
  const int unit = threadIdx.x % kRowLanes, rowInPass = threadIdx.x / kRowLanes;
  const unsigned long long columns = op.inputLength; // a weight row: every head's columns
  const unsigned short *weights = context.weights + op.weights[0] +
                                  static_cast<unsigned long long>(first) * columns +
                                  head * kHeadDim + unit * 8;
  auto load = [&](int pass) {
    const unsigned r = pass * kRowsPerPass + rowInPass;
    return r < rows && unit < kUnits ? loadWeights8(weights + r * columns)
                                     : make_uint4(0, 0, 0, 0);
  };
  // Load, before the wait: the first passes' weights.
  uint4 early[kEarly];
#pragma unroll
  for (int p = 0; p < kEarly; ++p)
    early[p] = load(p);

  if (!awaitInputs())
    return;
  float *merged = context.shared;
  if (!mergeOneHead<kHeadDim, kChunks, kThreads>(
          context, op, head, context.shared + headProjectionStagingOffset(kHeadDim),
          context.shared + headProjectionSumsOffset(kHeadDim), merged))
    return;

  // Compute and store, pass by pass (every thread runs every pass, so that
  // the shuffles have all their lanes).
  unsigned long long *out =
      reinterpret_cast<unsigned long long *>(context.activations + op.output) + first;
  float4 x0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f), x1 = x0;
  if (unit < kUnits) {
    x0 = *reinterpret_cast<const float4 *>(merged + unit * 8);
    x1 = *reinterpret_cast<const float4 *>(merged + unit * 8 + 4);
  }
  auto project = [&](int pass, uint4 w) {
    const unsigned r = pass * kRowsPerPass + rowInPass;
    const float sum = groupSum<kRowLanes>(dot8(w, x0, x1, 0.0f));
    if (unit == 0 && r < rows)
      atomicAdd(out + r, static_cast<unsigned long long>(floatToFixed(sum)));
  };
#pragma unroll
  for (int p = 0; p < kEarly; ++p)
    project(p, early[p]);
#pragma unroll 1
  for (int base = kEarly; base < kPasses; base += kLoadsInFlight) {
    uint4 later[kLoadsInFlight];
#pragma unroll
    for (int p = 0; p < kLoadsInFlight; ++p)
      later[p] = base + p < kPasses ? load(base + p) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int p = 0; p < kLoadsInFlight; ++p)
      if (base + p < kPasses)
        project(base + p, later[p]);
  }
}

} // namespace mk::gpu

#endif
