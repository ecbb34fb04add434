// Gemv: output rows [begin, end) of epilogue(concat_i(W_i * norm(x) + b_i))
// (runtime/cpu/GemvTask.cpp).
//
// Load: the whole input into shared memory; with a prologue norm, every
// tile normalizes it itself (sum of squares by the block, then the scale),
// since the input is short next to the weight rows and a separate norm task
// would cost an extra event on the critical path.
// Compute: groups of kLanes lanes take one output row each; a lane streams
// its share of the row's bf16 weights in 16-byte loads, several in flight,
// accumulates in f32, and the group sums with shuffles. SiluMul rows read
// the gate row j and the up row N + j together; Residual adds the residual
// row. While the task waits for its input, the interpreter has already had
// its first weights prefetched into L2 (Prefetch.cuh); in a kernel built
// with stage buffers (WeightStaging.cuh, off by default) its first rows are
// in shared memory instead, read from there, the rest streamed as before.
// Store: the group's first lane writes the row.
#ifndef MKC_CODEGEN_DEVICE_GEMVTASK_CUH
#define MKC_CODEGEN_DEVICE_GEMVTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/WeightStaging.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Lanes per row: enough 16-byte chunks for each lane to have one, at most a
// warp, a power of two so that groups tile warps.
__host__ __device__ constexpr int gemvLanesPerRow(int chunks) {
  int lanes = 1;
  while (lanes < kWarpSize && lanes * 2 <= chunks)
    lanes *= 2;
  return lanes;
}

// Each thread's elements [threadIdx.x + j * kThreads), j < kPerThread,
// visited a batch at a time: the batch's global loads are all issued before
// any shared store, past which the compiler may not move them (it cannot
// always tell that the two do not alias), so that the input costs one round
// trip to L2 per batch rather than one per element.
template <int kInput, int kThreads, class Load, class Use>
__device__ __forceinline__ void forEachInBatches(Load load, Use use) {
  constexpr int kPerThread = (kInput + kThreads - 1) / kThreads;
  constexpr int kBatch = kPerThread < 8 ? kPerThread : 8;
  for (int base = 0; base < kPerThread; base += kBatch) {
    float values[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int i = threadIdx.x + (base + b) * kThreads;
      values[b] = i < kInput ? load(i) : 0.0f;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int i = threadIdx.x + (base + b) * kThreads;
      if (i < kInput)
        use(i, values[b]);
    }
  }
}

template <int kInput, bool kNorm, int kThreads>
__device__ void loadGemvInput(const TaskContext &context, const MkOperationRecord &op, float *x) {
  const float *input = context.activations + op.input;
  const float *weight = context.params + op.norm;
  // A few norm weights per thread ride along with the input's loads,
  // saving the norm a second round trip after the block's sum.
  constexpr int kPerThread = (kInput + kThreads - 1) / kThreads;
  constexpr bool kWeightsAhead = kNorm && kPerThread <= 8;
  float scales[kWeightsAhead ? kPerThread : 1];
  if constexpr (kWeightsAhead) {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      int i = threadIdx.x + j * kThreads;
      scales[j] = i < kInput ? weight[i] : 0.0f;
    }
  }
  float squares = 0.0f;
  forEachInBatches<kInput, kThreads>([&](int i) { return input[i]; },
                                     [&](int i, float value) {
                                       x[i] = value;
                                       squares += value * value;
                                     });
  if constexpr (kNorm) {
    // HF's order: the variance in f32, then x * rsqrt(variance + eps), then
    // times the weight.
    float variance = blockSum<kThreads>(squares) / static_cast<float>(kInput);
    float invRms = 1.0f / sqrtf(variance + op.eps);
    if constexpr (kWeightsAhead) {
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        int i = threadIdx.x + j * kThreads;
        if (i < kInput)
          x[i] = (x[i] * invRms) * scales[j];
      }
    } else {
      forEachInBatches<kInput, kThreads>(
          [&](int i) { return weight[i]; },
          [&](int i, float scale) { x[i] = (x[i] * invRms) * scale; });
    }
  }
  __syncthreads();
}

// Eight staged bf16 weights: 16 bytes of shared memory.
__device__ __forceinline__ uint4 loadStaged8(const unsigned short *address) {
  return *reinterpret_cast<const uint4 *>(address);
}

// One group's partial dot products of kRows stacked weight rows with x; the
// caller sums the group. The lane's 16-byte chunks of every row are loaded
// a batch at a time, all before the first is used, so that kLoadsInFlight
// loads per lane are outstanding: one SM needs tens of kilobytes in flight
// to take its share of HBM bandwidth. Each x chunk is read once for all
// rows. Every lane of the warp calls it (a row may be null for lanes past
// the tile: it contributes 0); a row marked `staged` is in shared memory.
template <int kInput, int kLanes, int kRows, int kLoadsInFlight>
__device__ __forceinline__ void rowsDot(const unsigned short *const (&rows)[kRows],
                                        const bool (&staged)[kRows], const float *x, int lane,
                                        float (&sums)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    sums[r] = 0.0f;
  if constexpr (kInput % 8 == 0) {
    constexpr int kChunks = kInput / 8;
    constexpr int kPerLane = (kChunks + kLanes - 1) / kLanes;
    constexpr int kWanted = kLoadsInFlight / kRows > 0 ? kLoadsInFlight / kRows : 1;
    constexpr int kBatch = kWanted < kPerLane ? kWanted : kPerLane;
    for (int base = 0; base < kPerLane; base += kBatch) {
      uint4 weights[kRows][kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        int chunk = lane + (base + b) * kLanes;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          weights[r][b] = rows[r] == nullptr || chunk >= kChunks ? make_uint4(0, 0, 0, 0)
                          : staged[r] ? loadStaged8(rows[r] + chunk * 8)
                                      : loadWeights8(rows[r] + chunk * 8);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        int chunk = lane + (base + b) * kLanes;
        if (chunk >= kChunks)
          continue;
        float4 x0 = *reinterpret_cast<const float4 *>(x + chunk * 8);
        float4 x1 = *reinterpret_cast<const float4 *>(x + chunk * 8 + 4);
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          const uint4 w = weights[r][b];
          float sum = sums[r];
          sum = fmaf(bf16Low(w.x), x0.x, sum);
          sum = fmaf(bf16High(w.x), x0.y, sum);
          sum = fmaf(bf16Low(w.y), x0.z, sum);
          sum = fmaf(bf16High(w.y), x0.w, sum);
          sum = fmaf(bf16Low(w.z), x1.x, sum);
          sum = fmaf(bf16High(w.z), x1.y, sum);
          sum = fmaf(bf16Low(w.w), x1.z, sum);
          sum = fmaf(bf16High(w.w), x1.w, sum);
          sums[r] = sum;
        }
      }
    }
  } else {
    // Rows not a multiple of 16 bytes cannot be read in 16-byte loads.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (rows[r] != nullptr)
        for (int i = lane; i < kInput; i += kLanes)
          sums[r] = fmaf(bf16ToFloat(rows[r][i]), x[i], sums[r]);
  }
}

template <int kInput, int kEpilogue, bool kNorm, bool kBias, int kThreads, int kLoadsInFlight>
__device__ void gemvTask(const TaskContext &context, const MkTaskRecord &task,
                         const MkOperationRecord &op) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  static_assert(kInput == gemvSharedFloats(kInput, kEpilogue, kNorm, kBias),
                "x is what core/protocol/SharedMemory.h reserves");
  float *x = context.shared; // [kInput]
  loadGemvInput<kInput, kNorm, kThreads>(context, op, x);
  const StagedRows staged = context.staged;
  waitStaged(context, staged);

  constexpr int kLanes = gemvLanesPerRow(kInput / 8);
  constexpr int kRowsPerWarp = kWarpSize / kLanes;
  constexpr int kRowsPerPass = kThreads / kLanes;
  // A SiluMul output row needs the gate row j and the up row N + j.
  constexpr int kRows = kEpilogue == MK_EPILOGUE_SILU_MUL ? 2 : 1;
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  float *out = context.activations + op.output;

  // The loop bound is the warp's first row, so a warp's lanes run the same
  // passes and every shuffle has all 32 of them.
  for (unsigned long long first = task.begin + warp * kRowsPerWarp; first < task.end;
       first += kRowsPerPass) {
    unsigned long long row = first + groupInWarp;
    bool active = row < task.end;
    // Read before the weights, so that its latency hides behind theirs.
    float residual = 0.0f;
    if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
      residual = active && lane == 0 ? context.activations[op.residual + row] : 0.0f;
    // Row i of the tile, of stacked part r: staged at (r * count + i) * K.
    const unsigned long long i = row - task.begin;
    const bool inStage = active && i < staged.count;
    const unsigned short *rows[kRows];
    bool fromStage[kRows];
    rows[0] = !active ? nullptr
              : inStage ? staged.rows + i * kInput
                        : stackedRow<kInput>(context, op, row);
    fromStage[0] = inStage;
    if constexpr (kRows == 2) {
      rows[1] = !active ? nullptr
                : inStage ? staged.rows + (staged.count + i) * kInput
                          : stackedRow<kInput>(context, op, op.outputLength + row);
      fromStage[1] = inStage;
    }
    float sums[kRows];
    rowsDot<kInput, kLanes, kRows, kLoadsInFlight>(rows, fromStage, x, lane, sums);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      sums[r] = groupSum<kLanes>(sums[r]);
      if constexpr (kBias)
        sums[r] += active ? context.params[op.bias + r * op.outputLength + row] : 0.0f;
    }
    float result = sums[0];
    if constexpr (kEpilogue == MK_EPILOGUE_SILU_MUL)
      result = sums[0] / (1.0f + expf(-sums[0])) * sums[1];
    else if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
      result = residual + result;
    if (active && lane == 0)
      out[row] = result;
  }
}

} // namespace mk::gpu

#endif
