// Gemv over a step of kStepRows rows (a batch): output rows [begin, end) of
// epilogue(concat_i(W_i * norm(x_m) + b_i)) for every step row m
// (runtime/cpu/GemvTask.cpp), each weight row streamed from HBM once for
// all of them, on CUDA cores: at a few rows a step the gemv stays bound by
// the weights' bytes, as at one (docs/m-token-steps.md).
//
// Load: after the wait, each row's inverse RMS (a warp a row) where the
// gemv has a prologue norm; then every row's input, normalized, into shared
// memory a slice at a time (core/protocol/GemvGeometry.h: the whole input
// where the rows fit, as on the Llama-3.2-1B shape at 4 rows).
// Compute: groups of kLanes lanes take one output row each, as the one-row
// gemv cuts them (GemvGeometry); a lane loads a batch of its row's 16-byte
// chunks, then multiplies each with the same chunk of every step row's
// input. Slices that do not hold the whole input are taken pass by pass,
// every consumer together (a barrier before and after each), the sums kept
// in registers across them.
// Store: per step row, the group's first lane writes the output row (with
// the bias, the epilogue, the residual of that step row); the logits' Gemv
// writes each step row's tile pick.
#ifndef MKC_CODEGEN_DEVICE_GEMVROWSTASK_CUH
#define MKC_CODEGEN_DEVICE_GEMVROWSTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Picks.cuh"
#include "core/protocol/GemvGeometry.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kStepRows,
          int kThreads, int kLoadsInFlight, class AwaitInputs>
__device__ void gemvRowsTask(const TaskContext &context, const MkTaskRecord &task,
                             const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  // A SiluMul output row needs the gate row j and the up row N + j.
  constexpr int kRows = kEpilogue == MK_EPILOGUE_SILU_MUL ? 2 : 1;
  // Fewer loads in flight than one row's gemv from 4 rows on: the step
  // rows' sums take the registers (the Qwen3-0.6B shape's kernel for 8 rows
  // spilled 216 bytes with the full batch of loads, 16 with half).
  constexpr int kLoads = kStepRows >= 4 && kLoadsInFlight >= 2 ? kLoadsInFlight / 2 : kLoadsInFlight;
  constexpr GemvGeometry kGeometry = gemvGeometry(kInput, kRows, kThreads, kLoads);
  constexpr bool kVector = kInput % 8 == 0;
  constexpr int kLanes = kGeometry.lanes, kChunks = kGeometry.chunks;
  constexpr int kBatch = kGeometry.batch;
  constexpr int kRowsPerPass = kGeometry.rowsPerPass();
  constexpr int kSlice = static_cast<int>(gemvRowsSlice(kInput, kStepRows));
  constexpr int kSlices = (kInput + kSlice - 1) / kSlice;
  constexpr int kUnit = gemvRowsSliceUnit(kInput); // elements of one round of the lanes
  static_assert(kSlices == 1 || kSlice % kUnit == 0, "a slice is whole rounds of the lanes");
  static_assert(kStepRows * kSlice + kStepRows ==
                    gemvSharedFloats(kInput, kEpilogue, kNorm, kBias, kPicks, 0, kStepRows),
                "the slices and the norms are what core/protocol/SharedMemory.h reserves");
  constexpr int kWarps = kThreads / kWarpSize;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  const int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  float *xs = context.shared;                 // [kStepRows][kSlice]
  float *invRms = xs + kStepRows * kSlice;    // [kStepRows]
  const float *input = context.activations + op.input;
  float *out = context.activations + op.output;

  if (!awaitInputs())
    return;

  // Load: each row's inverse RMS, a warp a row (HF's order: the variance in
  // f32, then x * rsqrt(variance + eps), then times the weight).
  if constexpr (kNorm) {
    for (int m = warp; m < kStepRows; m += kWarps) {
      const float *x = input + static_cast<unsigned long long>(m) * kInput;
      float squares = 0.0f;
      for (int i = threadIdx.x % kWarpSize; i < kInput; i += kWarpSize)
        squares += x[i] * x[i];
      squares = warpSum(squares);
      if (threadIdx.x % kWarpSize == 0)
        invRms[m] = 1.0f / sqrtf(squares / static_cast<float>(kInput) + op.eps);
    }
    consumerSync<kThreads>();
  }
  // Load: slice s of every row's input, normalized, a batch of loads at a
  // time (forEachInBatches: every load of a batch issued before the first
  // shared store, so the slice costs a round trip to L2 a batch, not one an
  // element).
  auto loadSlice = [&](int s) {
    const int first = s * kSlice;
    const int length = kInput - first < kSlice ? kInput - first : kSlice;
    auto inside = [&](int i) { return i % kSlice < length; };
    forEachInBatches<kStepRows * kSlice, kThreads>(
        [&](int i) {
          if (!inside(i))
            return 0.0f;
          const int m = i / kSlice, k = i % kSlice;
          float value = input[static_cast<unsigned long long>(m) * kInput + first + k];
          if constexpr (kNorm)
            value = (value * invRms[m]) * context.params[op.norm + first + k];
          return value;
        },
        [&](int i, float value) {
          if (inside(i))
            xs[i] = value;
        });
  };

  const unsigned long long tileRows = task.end - task.begin;
  const int passes = static_cast<int>((tileRows + kRowsPerPass - 1) / kRowsPerPass);
  for (int pass = 0; pass < passes; ++pass) {
    const unsigned long long row = task.begin + static_cast<unsigned long long>(pass) * kRowsPerPass +
                                   warp * (kWarpSize / kLanes) + groupInWarp;
    const bool active = row < task.end;
    const unsigned short *rows[kRows];
    rows[0] = active ? stackedRow<kInput>(context, op, row) : nullptr;
    if constexpr (kRows == 2)
      rows[1] = active ? stackedRow<kInput>(context, op, op.outputLength + row) : nullptr;
    float sums[kStepRows][kRows];
#pragma unroll
    for (int m = 0; m < kStepRows; ++m)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        sums[m][r] = 0.0f;

    for (int s = 0; s < kSlices; ++s) {
      if (kSlices > 1 || pass == 0) {
        if (pass > 0 || s > 0)
          consumerSync<kThreads>(); // every thread is done with the slice before
        loadSlice(s);
        consumerSync<kThreads>();
      }
      const int first = s * kSlice;
      if constexpr (kVector) {
        // The lane's chunks of this slice: lane + j * kLanes, j in [jBegin, jEnd).
        const int jBegin = first / kUnit;
        const int jEnd = kSlices == 1 ? kGeometry.perLane : (first + kSlice) / kUnit;
        for (int base = jBegin; base < jEnd; base += kBatch) {
          uint4 weights[kRows][kBatch];
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
            const int chunk = lane + (base + b) * kLanes;
            const bool inside = base + b < jEnd && chunk < kChunks;
#pragma unroll
            for (int r = 0; r < kRows; ++r)
              weights[r][b] = rows[r] != nullptr && inside ? loadWeights8(rows[r] + chunk * 8)
                                                           : make_uint4(0, 0, 0, 0);
          }
#pragma unroll
          for (int b = 0; b < kBatch; ++b) {
            const int chunk = lane + (base + b) * kLanes;
            if (base + b >= jEnd || chunk >= kChunks)
              continue;
            const int k = chunk * 8 - first;
#pragma unroll
            for (int m = 0; m < kStepRows; ++m) {
              const float4 x0 = *reinterpret_cast<const float4 *>(xs + m * kSlice + k);
              const float4 x1 = *reinterpret_cast<const float4 *>(xs + m * kSlice + k + 4);
#pragma unroll
              for (int r = 0; r < kRows; ++r) {
                const uint4 w = weights[r][b];
                float sum = sums[m][r];
                sum = fmaf(bf16Low(w.x), x0.x, sum);
                sum = fmaf(bf16High(w.x), x0.y, sum);
                sum = fmaf(bf16Low(w.y), x0.z, sum);
                sum = fmaf(bf16High(w.y), x0.w, sum);
                sum = fmaf(bf16Low(w.z), x1.x, sum);
                sum = fmaf(bf16High(w.z), x1.y, sum);
                sum = fmaf(bf16Low(w.w), x1.z, sum);
                sum = fmaf(bf16High(w.w), x1.w, sum);
                sums[m][r] = sum;
              }
            }
          }
        }
      } else {
        // Rows not a multiple of 16 bytes cannot be read in 16-byte loads.
        const int last = first + kSlice < kInput ? first + kSlice : kInput;
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          if (rows[r] != nullptr)
            for (int k = first + lane; k < last; k += kLanes) {
              const float w = bf16ToFloat(rows[r][k]);
#pragma unroll
              for (int m = 0; m < kStepRows; ++m)
                sums[m][r] = fmaf(w, xs[m * kSlice + k - first], sums[m][r]);
            }
      }
    }

    // Store: every step row's output row.
#pragma unroll
    for (int m = 0; m < kStepRows; ++m) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        sums[m][r] = groupSum<kLanes>(sums[m][r]);
        if constexpr (kBias)
          sums[m][r] += active ? context.params[op.bias + r * op.outputLength + row] : 0.0f;
      }
      float result = sums[m][0];
      if constexpr (kEpilogue == MK_EPILOGUE_SILU_MUL)
        result = sums[m][0] / (1.0f + expf(-sums[m][0])) * sums[m][1];
      if (active && lane == 0) {
        const unsigned long long at = static_cast<unsigned long long>(m) * op.outputLength + row;
        if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
          result = context.activations[op.residual + at] + result;
        out[at] = result;
      }
    }
  }

  // Store: each step row's pick of the tile, from the outputs this thread
  // stored (read back: a thread keeps no candidates per row across passes).
  if constexpr (kPicks) {
    for (int m = 0; m < kStepRows; ++m) {
      Candidate best{0.0f, kNoIndex};
      unsigned nonFinite = kNoIndex;
      if (lane == 0) {
        for (int pass = 0; pass < passes; ++pass) {
          const unsigned long long row = task.begin +
                                         static_cast<unsigned long long>(pass) * kRowsPerPass +
                                         warp * (kWarpSize / kLanes) + groupInWarp;
          if (row >= task.end)
            break;
          const float result = out[static_cast<unsigned long long>(m) * op.outputLength + row];
          if (!isFinite(result))
            nonFinite = min(nonFinite, static_cast<unsigned>(row));
          else if (best.index == kNoIndex || result > best.value)
            best = Candidate{result, static_cast<unsigned>(row)};
        }
      }
      if (m > 0)
        consumerSync<kThreads>(); // the previous row's pick has read its shared words
      storePick<kThreads>(context.activations + op.partials +
                              static_cast<unsigned long long>(m) * 2 * op.numChunks,
                          task, best, nonFinite);
    }
  }
}

} // namespace mk::gpu

#endif
