// Gemv: output rows [begin, end) of epilogue(concat_i(W_i * norm(x) + b_i))
// (runtime/cpu/GemvTask.cpp).
//
// Load: the whole input into shared memory; with a prologue norm, every
// tile normalizes it itself (sum of squares by the block, then the scale),
// since the input is short next to the weight rows and a separate norm task
// would cost an extra event on the critical path.
// Compute: groups of kLanes lanes take one output row each; a lane streams
// its share of the row's bf16 weights in 16-byte loads, accumulates in f32,
// and the group sums with shuffles. SiluMul rows read the gate row j and the
// up row N + j; Residual adds the residual row.
// Store: the group's first lane writes the row.
#ifndef MKC_CODEGEN_DEVICE_GEMVTASK_CUH
#define MKC_CODEGEN_DEVICE_GEMVTASK_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

// Lanes per row: enough 16-byte chunks for each lane to have one, at most a
// warp, a power of two so that groups tile warps.
__host__ __device__ constexpr int gemvLanesPerRow(int chunks) {
  int lanes = 1;
  while (lanes < kWarpSize && lanes * 2 <= chunks)
    lanes *= 2;
  return lanes;
}

template <int kInput, bool kNorm, int kThreads>
__device__ void loadGemvInput(const TaskContext &context, const MkOperationRecord &op, float *x) {
  const float *input = context.activations + op.input;
  float squares = 0.0f;
  for (int i = threadIdx.x; i < kInput; i += kThreads) {
    float value = input[i];
    x[i] = value;
    squares += value * value;
  }
  if constexpr (kNorm) {
    // HF's order: the variance in f32, then x * rsqrt(variance + eps), then
    // times the weight.
    float variance = blockSum<kThreads>(squares) / static_cast<float>(kInput);
    float invRms = 1.0f / sqrtf(variance + op.eps);
    const float *weight = context.params + op.norm;
    for (int i = threadIdx.x; i < kInput; i += kThreads)
      x[i] = (x[i] * invRms) * weight[i];
  }
  __syncthreads();
}

// One group's partial dot product of a stacked weight row with x; the
// caller sums the group. Every lane of the warp calls it (row may be null
// for lanes past the tile: they contribute 0).
template <int kInput, int kLanes>
__device__ __forceinline__ float rowDot(const unsigned short *row, const float *x, int lane) {
  float sum = 0.0f;
  if (row == nullptr)
    return sum;
  if constexpr (kInput % 8 == 0) {
    constexpr int kChunks = kInput / 8;
#pragma unroll 4
    for (int chunk = lane; chunk < kChunks; chunk += kLanes) {
      uint4 weights = loadWeights8(row + chunk * 8);
      float4 x0 = *reinterpret_cast<const float4 *>(x + chunk * 8);
      float4 x1 = *reinterpret_cast<const float4 *>(x + chunk * 8 + 4);
      sum = fmaf(bf16Low(weights.x), x0.x, sum);
      sum = fmaf(bf16High(weights.x), x0.y, sum);
      sum = fmaf(bf16Low(weights.y), x0.z, sum);
      sum = fmaf(bf16High(weights.y), x0.w, sum);
      sum = fmaf(bf16Low(weights.z), x1.x, sum);
      sum = fmaf(bf16High(weights.z), x1.y, sum);
      sum = fmaf(bf16Low(weights.w), x1.z, sum);
      sum = fmaf(bf16High(weights.w), x1.w, sum);
    }
  } else {
    // Rows not a multiple of 16 bytes cannot be read in 16-byte loads.
    for (int i = lane; i < kInput; i += kLanes)
      sum = fmaf(bf16ToFloat(row[i]), x[i], sum);
  }
  return sum;
}

template <int kInput, int kLanes, bool kBias>
__device__ __forceinline__ float stackedValue(const TaskContext &context,
                                              const MkOperationRecord &op, const float *x,
                                              unsigned long long row, bool active, int lane) {
  const unsigned short *weights = active ? stackedRow<kInput>(context, op, row) : nullptr;
  float value = groupSum<kLanes>(rowDot<kInput, kLanes>(weights, x, lane));
  if constexpr (kBias)
    value += active ? context.params[op.bias + row] : 0.0f;
  return value;
}

template <int kInput, int kEpilogue, bool kNorm, bool kBias, int kThreads>
__device__ void gemvTask(const TaskContext &context, const MkTaskRecord &task,
                         const MkOperationRecord &op) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  float *x = context.shared;
  loadGemvInput<kInput, kNorm, kThreads>(context, op, x);

  constexpr int kLanes = gemvLanesPerRow(kInput / 8);
  constexpr int kRowsPerWarp = kWarpSize / kLanes;
  constexpr int kRowsPerPass = kThreads / kLanes;
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  float *out = context.activations + op.output;

  // The loop bound is the warp's first row, so a warp's lanes run the same
  // passes and every shuffle has all 32 of them.
  for (unsigned long long first = task.begin + warp * kRowsPerWarp; first < task.end;
       first += kRowsPerPass) {
    unsigned long long row = first + groupInWarp;
    bool active = row < task.end;
    float result;
    if constexpr (kEpilogue == MK_EPILOGUE_SILU_MUL) {
      float gate = stackedValue<kInput, kLanes, kBias>(context, op, x, row, active, lane);
      float up = stackedValue<kInput, kLanes, kBias>(context, op, x, op.outputLength + row,
                                                     active, lane);
      result = gate / (1.0f + expf(-gate)) * up;
    } else {
      result = stackedValue<kInput, kLanes, kBias>(context, op, x, row, active, lane);
      if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
        result = (active ? context.activations[op.residual + row] : 0.0f) + result;
    }
    if (active && lane == 0)
      out[row] = result;
  }
}

} // namespace mk::gpu

#endif
