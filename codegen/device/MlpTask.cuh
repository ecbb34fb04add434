// Mlp: intermediate channels [begin, end) of the gated MLP through both of
// its matrices, added into the Fixed64 output (runtime/cpu/MlpTask.cpp).
//
// Load: the whole input into shared memory, normalized there
// (loadGemvInput, as a Gemv's).
// Compute, gate and up: the slice's gate row j and up row I + j stream as
// a SiluMul Gemv's (RowStream), and silu(gate) * up lands in shared memory,
// so that down needs no event: the slice's activations never leave the SM.
// Compute, down: each output row's columns [begin, end) are one short run
// of 16-byte chunks; kRowLanes lanes split a row's chunks, each lane keeping
// its chunks' activations in registers for every row, and a thread has
// kRowsInFlight rows' loads in flight.
// Store: each row's sum, rounded to fixed point, added into the output with
// one 64-bit atomic (a RED: nothing waits for it); the sum over the slices
// is exact, so any order of the adds gives the same bits
// (core/protocol/FixedPoint.h). The task's trigger releases them with the
// rest of its writes.
#ifndef MKC_CODEGEN_DEVICE_MLPTASK_CUH
#define MKC_CODEGEN_DEVICE_MLPTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/GemvTask.cuh"
#include "core/protocol/FixedPoint.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// The smallest power of two of at least `n` lanes, at most a warp.
__host__ __device__ constexpr int mlpRowLanes(int n) {
  int lanes = 1;
  while (lanes < n && lanes < kWarpSize)
    lanes *= 2;
  return lanes;
}

template <int kInput, int kOutput, int kSlice, bool kNorm, int kThreads, int kLoadsInFlight,
          class AwaitInputs>
__device__ void mlpTask(const TaskContext &context, const MkTaskRecord &task,
                        const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  static_assert(kSlice % 8 == 0, "a slice is whole 16-byte chunks of a down row");
  constexpr int kActOffset = (kInput + 3) / 4 * 4;
  static_assert(kActOffset + kSlice == mlpSharedFloats(kInput, kOutput, kSlice, kNorm),
                "x and the slice's activations are what core/protocol/SharedMemory.h reserves");
  float *x = context.shared;                // [kInput]
  float *gated = context.shared + kActOffset; // [kSlice]

  if (!awaitInputs())
    return;
  loadGemvInput<kInput, kNorm, kThreads>(context, op, x);

  // Gate and up: output row j of a SiluMul Gemv over rows [begin, end).
  using Stream = RowStream<kInput, 2, kThreads, kLoadsInFlight>;
  constexpr int kLanes = Stream::kLanes;
  constexpr int kRowsPerWarp = Stream::kGeometry.rowsPerWarp;
  constexpr int kRowsPerPass = Stream::kGeometry.warps * kRowsPerWarp;
  constexpr int kBatchesPerPass = (Stream::kPerLane + Stream::kBatch - 1) / Stream::kBatch;
  static_assert(kRowsPerPass == kThreads / kLanes, "every lane has a row");
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  const int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  const unsigned long long channels = op.weightRows[0];
  // The loop bound is the warp's first row, so that every shuffle has the
  // warp's 32 lanes.
  for (unsigned long long first = task.begin + warp * kRowsPerWarp; first < task.end;
       first += kRowsPerPass) {
    const unsigned long long row = first + groupInWarp;
    const bool active = row < task.end;
    const unsigned short *rows[2] = {active ? stackedRow<kInput>(context, op, row) : nullptr,
                                     active ? stackedRow<kInput>(context, op, channels + row)
                                            : nullptr};
    float sums[2] = {0.0f, 0.0f};
    if constexpr (!Stream::kVector) {
#pragma unroll
      for (int r = 0; r < 2; ++r)
        if (rows[r] != nullptr)
          for (int k = lane; k < kInput; k += kLanes)
            sums[r] = fmaf(bf16ToFloat(rows[r][k]), x[k], sums[r]);
    } else {
      for (int j = 0; j < kBatchesPerPass; ++j) {
        Stream batch;
        batch.load(rows, lane, j * Stream::kBatch, nullptr);
        batch.accumulate(x, lane, j * Stream::kBatch, sums);
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      sums[r] = groupSum<kLanes>(sums[r]);
    if (active && lane == 0)
      gated[row - task.begin] = sums[0] / (1.0f + expf(-sums[0])) * sums[1];
  }
  consumerSync<kThreads>();

  // Down: rows [0, kOutput) of W_down[:, begin:end) times the activations.
  constexpr int kChunks = kSlice / 8;
  constexpr int kRowLanes = mlpRowLanes(kChunks);
  constexpr int kChunksPerLane = (kChunks + kRowLanes - 1) / kRowLanes;
  constexpr int kRowsPerDownPass = kThreads / kRowLanes;
  constexpr int kRowsInFlight =
      kLoadsInFlight / kChunksPerLane > 0 ? kLoadsInFlight / kChunksPerLane : 1;
  const int chunks = static_cast<int>(task.end - task.begin) / 8;
  const int rowLane = threadIdx.x % kRowLanes;
  float h[kChunksPerLane][8];
#pragma unroll
  for (int k = 0; k < kChunksPerLane; ++k) {
    const int chunk = rowLane + k * kRowLanes;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      h[k][e] = chunk < chunks ? gated[chunk * 8 + e] : 0.0f;
  }
  const unsigned short *down = context.weights + op.weights[2] + task.begin;
  unsigned long long *out = reinterpret_cast<unsigned long long *>(context.activations + op.output);
  // Every thread runs the same passes (the bound is the CTA's), so that the
  // group sums have all their lanes.
  for (int pass = 0; pass < kOutput; pass += kRowsInFlight * kRowsPerDownPass) {
    const int base = pass + static_cast<int>(threadIdx.x) / kRowLanes;
    uint4 w[kRowsInFlight][kChunksPerLane];
#pragma unroll
    for (int b = 0; b < kRowsInFlight; ++b) {
      const int row = base + b * kRowsPerDownPass;
#pragma unroll
      for (int k = 0; k < kChunksPerLane; ++k) {
        const int chunk = rowLane + k * kRowLanes;
        w[b][k] = row < kOutput && chunk < chunks
                      ? loadWeights8(down + static_cast<unsigned long long>(row) * channels +
                                     chunk * 8)
                      : make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int b = 0; b < kRowsInFlight; ++b) {
      const int row = base + b * kRowsPerDownPass;
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kChunksPerLane; ++k) {
        const uint4 v = w[b][k];
        sum = fmaf(bf16Low(v.x), h[k][0], sum);
        sum = fmaf(bf16High(v.x), h[k][1], sum);
        sum = fmaf(bf16Low(v.y), h[k][2], sum);
        sum = fmaf(bf16High(v.y), h[k][3], sum);
        sum = fmaf(bf16Low(v.z), h[k][4], sum);
        sum = fmaf(bf16High(v.z), h[k][5], sum);
        sum = fmaf(bf16Low(v.w), h[k][6], sum);
        sum = fmaf(bf16High(v.w), h[k][7], sum);
      }
      sum = groupSum<kRowLanes>(sum);
      if (row < kOutput && rowLane == 0)
        atomicAdd(out + row, static_cast<unsigned long long>(floatToFixed(sum)));
    }
  }
}

} // namespace mk::gpu

#endif
