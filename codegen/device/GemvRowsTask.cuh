// Gemv over a step of kStepRows rows (a batch): output rows [begin, end) of
// epilogue(concat_i(W_i * norm(x_m) + b_i)) for every step row m
// (runtime/cpu/GemvTask.cpp), each weight row streamed from HBM once for
// all of them (docs/m-token-steps.md).
//
// Load: after the wait, each row's inverse RMS (a warp a row) where the
// gemv has a prologue norm; then every row's input, normalized, into shared
// memory a slice at a time (core/protocol/GemvGeometry.h: the whole input
// where the rows fit, as on the Llama-3.2-1B shape at 4 rows).
// Compute, on tensor cores for 4 to 8 rows of 16-byte chunks
// (gemvRowsTensorCores): a warp takes 16 weight rows (8 gate and their 8 up
// rows for SiluMul) and 32 input elements a step, each lane loading 16
// bytes of two rows and 8 of its batch row's inputs, as two
// mma.m16n8k16: the 32 elements are read in an order of the warp's own
// (whatever order the lanes hold them in, A's and B's agree), the inputs
// as bf16 twice, their value and what it leaves, so that the products keep
// an f32's precision. Where a tile has fewer row groups than warps, the
// warps split the input and add their partial sums in a fixed order. Else
// (gemvRowsCudaCores): groups of lanes take one output row each as the
// one-row gemv cuts them, each 16-byte chunk multiplied with the same chunk
// of every step row's input.
// Store: per step row, each output with the bias, the epilogue, the
// residual of that step row; the logits' Gemv writes each step row's tile
// pick.
#ifndef MKC_CODEGEN_DEVICE_GEMVROWSTASK_CUH
#define MKC_CODEGEN_DEVICE_GEMVROWSTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Picks.cuh"
#include "core/protocol/GemvGeometry.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Every step row's input in shared memory (core/protocol/GemvGeometry.h):
// each row's inverse RMS where the gemv normalizes, then slices of the
// rows, normalized, row m's at xs + m * kStride.
template <int kInput, bool kNorm, int kStepRows, int kThreads>
struct GemvRowsInput {
  static constexpr int kSlice = static_cast<int>(gemvRowsSlice(kInput, kStepRows));
  static constexpr int kSlices = (kInput + kSlice - 1) / kSlice;
  static constexpr int kStride = static_cast<int>(gemvRowsStride(kInput, kStepRows));
  static constexpr int kFloats = static_cast<int>(gemvRowsSharedFloats(kInput, kStepRows));

  const TaskContext &context;
  const MkOperationRecord &op;
  float *xs = context.shared;                                  // [kStepRows][kStride]
  float *invRms = context.shared + kFloats - kStepRows;        // [kStepRows]
  const float *input = context.activations + op.input;

  // HF's order: the variance in f32, then x * rsqrt(variance + eps), then
  // times the weight. A warp a row; a barrier after.
  __device__ __forceinline__ void loadNorms() const {
    if constexpr (kNorm) {
      constexpr int kWarps = kThreads / kWarpSize;
      for (int m = threadIdx.x / kWarpSize; m < kStepRows; m += kWarps) {
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
  }

  // Slice s of every row, a batch of loads at a time (forEachInBatches:
  // every load of a batch issued before the first shared store, so the
  // slice costs a round trip to L2 a batch, not one an element). The
  // caller's barriers surround it.
  __device__ __forceinline__ void loadSlice(int s) const {
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
            xs[(i / kSlice) * kStride + i % kSlice] = value;
        });
  }
};

// A step row's output: the bias, the epilogue (silu(gate) * up, or the
// residual of that row added) and the store; returns what it stored.
template <int kEpilogue, bool kBias>
struct GemvRowsOutput {
  const TaskContext &context;
  const MkOperationRecord &op;
  float *out = context.activations + op.output;

  // `gate`: the row's gate (or only) sum; `up`: its up sum (SiluMul).
  __device__ __forceinline__ float store(int m, unsigned long long row, float gate,
                                         float up = 0.0f) const {
    if constexpr (kBias) {
      gate += context.params[op.bias + row];
      if constexpr (kEpilogue == MK_EPILOGUE_SILU_MUL)
        up += context.params[op.bias + op.outputLength + row];
    }
    float result = gate;
    if constexpr (kEpilogue == MK_EPILOGUE_SILU_MUL)
      result = gate / (1.0f + expf(-gate)) * up;
    const unsigned long long at = static_cast<unsigned long long>(m) * op.outputLength + row;
    if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
      result = context.activations[op.residual + at] + result;
    out[at] = result;
    return result;
  }
};

// Two floats as bf16 (the nearest, lower element in the low half), and what
// that leaves of them as bf16 too: their sum is the floats within 2^-16.
__device__ __forceinline__ void splitBf16(float low, float high, unsigned &value,
                                          unsigned &rest) {
  value = packBf16(low, high);
  rest = packBf16(low - bf16Low(value), high - bf16High(value));
}

// The tensor-core path, for rows of whole 16-byte chunks and up to 8 step
// rows: see the top of the file.
template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kStepRows,
          int kThreads, class AwaitInputs>
__device__ void gemvRowsTensorCores(const TaskContext &context, const MkTaskRecord &task,
                                    const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  using Input = GemvRowsInput<kInput, kNorm, kStepRows, kThreads>;
  static_assert(kInput % 8 == 0 && kStepRows <= 8, "16-byte chunks, at most 8 rows");
  static_assert(Input::kSlices == 1 || Input::kSlice % 32 == 0, "a slice is whole steps");
  constexpr int kWarps = kThreads / kWarpSize;
  static_assert(kWarps * 128 <= kGemvRowsScratchFloats, "the warps' partial sums fit");
  constexpr bool kGated = kEpilogue == MK_EPILOGUE_SILU_MUL;
  constexpr int kGroupRows = kGated ? 8 : 16; // output rows of a warp's 16 weight rows
  constexpr int kSteps = (kInput + 31) / 32;  // of 32 input elements
  constexpr int kInFlight = 4;                // steps whose weights are loaded at once
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4;
  const Input in{context, op};
  const GemvRowsOutput<kEpilogue, kBias> output{context, op};

  if (!awaitInputs())
    return;
  in.loadNorms();

  // Units of work: (row group, part of the input). Where a tile has fewer
  // groups than warps, each group's input is cut into parts (a power of
  // two), one a warp, so that every warp streams.
  const unsigned long long tileRows = task.end - task.begin;
  const int groups = static_cast<int>((tileRows + kGroupRows - 1) / kGroupRows);
  int parts = 1;
  while (groups * parts * 2 <= kWarps && parts * 2 <= kSteps)
    parts *= 2;
  const int units = groups * parts;
  const int stepsPerPart = (kSteps + parts - 1) / parts;
  // The lane's weight rows of a group: A's rows g and g + 8.
  auto weightRows = [&](int group, const unsigned short *&upper, const unsigned short *&lower) {
    const unsigned long long first = task.begin + static_cast<unsigned long long>(group) * kGroupRows;
    if constexpr (kGated) {
      const bool inside = first + g < task.end;
      upper = inside ? stackedRow<kInput>(context, op, first + g) : nullptr;
      lower = inside ? stackedRow<kInput>(context, op, op.outputLength + first + g) : nullptr;
    } else {
      upper = first + g < task.end ? stackedRow<kInput>(context, op, first + g) : nullptr;
      lower = first + g + 8 < task.end ? stackedRow<kInput>(context, op, first + g + 8) : nullptr;
    }
  };

  Candidate best[2] = {{0.0f, kNoIndex}, {0.0f, kNoIndex}}; // the lane's batch rows 2t, 2t + 1
  unsigned nonFinite[2] = {kNoIndex, kNoIndex};
  for (int first = 0; first < units; first += kWarps) {
    // One unit a warp this round.
    const int unit = first + warp;
    const int group = unit / parts, part = unit % parts;
    const bool working = unit < units;
    const unsigned short *upper = nullptr, *lower = nullptr;
    if (working)
      weightRows(group, upper, lower);
    const int stepBegin = part * stepsPerPart;
    const int stepEnd = min(kSteps, stepBegin + stepsPerPart);
    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int s = 0; s < Input::kSlices; ++s) {
      if (Input::kSlices > 1 || first == 0) {
        if (first > 0 || s > 0)
          consumerSync<kThreads>(); // every warp is done with the slice before
        in.loadSlice(s);
        consumerSync<kThreads>();
      }
      const int sliceBegin = s * (Input::kSlice / 32);
      const int begin = max(stepBegin, sliceBegin);
      const int end = min(stepEnd, sliceBegin + (Input::kSlice + 31) / 32);
      const float *x = in.xs + g * Input::kStride - s * Input::kSlice; // by input element
      for (int base = begin; working && base < end; base += kInFlight) {
        uint4 upperWeights[kInFlight], lowerWeights[kInFlight];
#pragma unroll
        for (int i = 0; i < kInFlight; ++i) {
          const int k = (base + i) * 32 + 8 * t; // the lane's 8 input elements
          const bool inside = base + i < end && k < kInput;
          upperWeights[i] = upper != nullptr && inside ? loadWeights8(upper + k) : make_uint4(0, 0, 0, 0);
          lowerWeights[i] = lower != nullptr && inside ? loadWeights8(lower + k) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int i = 0; i < kInFlight; ++i) {
          const int k = (base + i) * 32 + 8 * t;
          if (base + i >= end)
            break;
          float4 x0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f), x1 = x0;
          if (g < kStepRows && k < kInput) {
            x0 = *reinterpret_cast<const float4 *>(x + k);
            x1 = *reinterpret_cast<const float4 *>(x + k + 4);
          }
          // Elements k..k+7 of the lane are, in each of the two mma's k16,
          // its logical columns 2t, 2t + 1 (pair 0) and 2t + 8, 2t + 9 (pair 1).
          unsigned v0, r0, v1, r1, v2, r2, v3, r3;
          splitBf16(x0.x, x0.y, v0, r0);
          splitBf16(x0.z, x0.w, v1, r1);
          splitBf16(x1.x, x1.y, v2, r2);
          splitBf16(x1.z, x1.w, v3, r3);
          const uint4 a = upperWeights[i], b = lowerWeights[i];
          mma16816(sums, a.x, b.x, a.y, b.y, v0, v1);
          mma16816(sums, a.x, b.x, a.y, b.y, r0, r1);
          mma16816(sums, a.z, b.z, a.w, b.w, v2, v3);
          mma16816(sums, a.z, b.z, a.w, b.w, r2, r3);
        }
      }
    }

    // The parts of a group meet: each warp's sums in shared memory (the
    // slices' words, free once every warp is done), added in part order by
    // the group's first warp.
    if (parts > 1) {
      float *scratch = context.shared;
      consumerSync<kThreads>();
#pragma unroll
      for (int i = 0; i < 4; ++i)
        scratch[warp * 128 + lane * 4 + i] = sums[i];
      consumerSync<kThreads>();
      if (working && part == 0) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          float total = 0.0f;
          for (int p = 0; p < parts; ++p)
            total += scratch[(warp + p) * 128 + lane * 4 + i];
          sums[i] = total;
        }
      }
    }

    // Store: lane (g, t) holds D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1].
    if (working && part == 0) {
      const unsigned long long rowBase = task.begin + static_cast<unsigned long long>(group) * kGroupRows;
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int m = 2 * t + j;
        if (m >= kStepRows)
          continue;
        if constexpr (kGated) {
          const unsigned long long row = rowBase + g;
          if (row < task.end) {
            const float result = output.store(m, row, sums[j], sums[2 + j]);
            if constexpr (kPicks)
              considerPick(best[j], nonFinite[j], result, row);
          }
        } else {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const unsigned long long row = rowBase + g + 8 * half;
            if (row < task.end) {
              const float result = output.store(m, row, sums[2 * half + j]);
              if constexpr (kPicks)
                considerPick(best[j], nonFinite[j], result, row);
            }
          }
        }
      }
    }
  }

  // Store: each step row's pick of the tile.
  if constexpr (kPicks) {
    for (int m = 0; m < kStepRows; ++m) {
      const int j = m - 2 * t;
      const bool mine = j == 0 || j == 1;
      if (m > 0)
        consumerSync<kThreads>(); // the previous row's pick has read its shared words
      storePick<kThreads>(context.activations + op.partials +
                              static_cast<unsigned long long>(m) * 2 * op.numChunks,
                          task, mine ? best[j] : Candidate{0.0f, kNoIndex},
                          mine ? nonFinite[j] : kNoIndex);
    }
  }
}

template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kStepRows,
          int kThreads, int kLoadsInFlight, class AwaitInputs>
__device__ void gemvRowsCudaCores(const TaskContext &context, const MkTaskRecord &task,
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
  using Input = GemvRowsInput<kInput, kNorm, kStepRows, kThreads>;
  constexpr int kSlice = Input::kSlice, kSlices = Input::kSlices, kStride = Input::kStride;
  constexpr int kUnit = gemvRowsSliceUnit(kInput); // elements of one round of the lanes
  static_assert(kSlices == 1 || kSlice % kUnit == 0, "a slice is whole rounds of the lanes");
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  const int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  const Input in{context, op};
  const float *xs = in.xs;
  const GemvRowsOutput<kEpilogue, kBias> output{context, op};
  Candidate best[kPicks ? kStepRows : 1];
  unsigned nonFinite[kPicks ? kStepRows : 1];
  for (int m = 0; m < (kPicks ? kStepRows : 1); ++m) {
    best[m] = Candidate{0.0f, kNoIndex};
    nonFinite[m] = kNoIndex;
  }

  if (!awaitInputs())
    return;
  in.loadNorms();
  auto loadSlice = [&](int s) { in.loadSlice(s); };

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
              const float4 x0 = *reinterpret_cast<const float4 *>(xs + m * kStride + k);
              const float4 x1 = *reinterpret_cast<const float4 *>(xs + m * kStride + k + 4);
#pragma unroll
              for (int r = 0; r < kRows; ++r)
                sums[m][r] = dot8(weights[r][b], x0, x1, sums[m][r]);
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
                sums[m][r] = fmaf(w, xs[m * kStride + k - first], sums[m][r]);
            }
      }
    }

    // Store: every step row's output row.
#pragma unroll
    for (int m = 0; m < kStepRows; ++m) {
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        sums[m][r] = groupSum<kLanes>(sums[m][r]);
      if (active && lane == 0) {
        const float result = output.store(m, row, sums[m][0], sums[m][kRows - 1]);
        if constexpr (kPicks)
          considerPick(best[m], nonFinite[m], result, row);
      }
    }
  }

  // Store: each step row's pick of the tile.
  if constexpr (kPicks) {
    for (int m = 0; m < kStepRows; ++m) {
      if (m > 0)
        consumerSync<kThreads>(); // the previous row's pick has read its shared words
      storePick<kThreads>(context.activations + op.partials +
                              static_cast<unsigned long long>(m) * 2 * op.numChunks,
                          task, best[m], nonFinite[m]);
    }
  }
}

template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kStepRows,
          int kThreads, int kLoadsInFlight, class AwaitInputs>
__device__ void gemvRowsTask(const TaskContext &context, const MkTaskRecord &task,
                             const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  static_assert(static_cast<long long>(GemvRowsInput<kInput, kNorm, kStepRows, kThreads>::kFloats) ==
                    static_cast<long long>(gemvSharedFloats(kInput, kEpilogue, kNorm, kBias, kPicks,
                                                            0, kStepRows)),
                "the slices and the norms are what core/protocol/SharedMemory.h reserves");
  // Tensor cores from 4 rows: at 2 the CUDA cores measured faster on the
  // H200 (the 1B shape 1.36 ms a step against 1.44, SmolLM2-135M 0.92
  // against 1.06; at 4 rows 2.11 against 1.81 on the 1B shape, 8 rows 3.86
  // against 2.44: bench/results/2026-12-03-h200-batches).
  if constexpr (kInput % 8 == 0 && kStepRows >= 4 && kStepRows <= 8)
    gemvRowsTensorCores<kInput, kEpilogue, kNorm, kBias, kPicks, kStepRows, kThreads>(
        context, task, op, awaitInputs);
  else
    gemvRowsCudaCores<kInput, kEpilogue, kNorm, kBias, kPicks, kStepRows, kThreads,
                      kLoadsInFlight>(context, task, op, awaitInputs);
}

} // namespace mk::gpu

#endif
