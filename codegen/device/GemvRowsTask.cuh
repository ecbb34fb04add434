// Gemv over a step of kStepRows rows (a batch): output rows [begin, end) of
// epilogue(concat_i(W_i * norm(x_m) + b_i)) for every step row m
// (runtime/cpu/GemvTask.cpp), each weight row streamed from HBM once for
// all of them (docs/m-token-steps.md).
//
// Load: on tensor cores, each warp's first batch of weights before the
// task waits (copied into shared memory: weights need no input); after the
// wait, every row's input into shared memory a slice at a time by cp.async
// (core/protocol/GemvGeometry.h: the whole input where the rows fit, as on
// the Llama-3.2-1B shape at 4 rows), normalized there where the gemv has a
// prologue norm (GemvRowsInput).
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
#include "codegen/device/Fragments.cuh"
#include "codegen/device/Picks.cuh"
#include "core/protocol/GemvGeometry.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Every step row's input in shared memory (core/protocol/GemvGeometry.h),
// a slice of the rows at a time (the whole input where they fit), copied
// by cp.async: every copy of the slice in flight at once and no register
// held, so that the slice costs one round trip to L2 whatever its size.
// Where the gemv normalizes its input, the norm's weights of the slice are
// copied beside the rows, each row's inverse RMS is taken from its sum of
// squares (in shared memory for one slice; for several, a first pass over
// the slices), and the rows are scaled in place: HF's order, the variance
// in f32, then x * rsqrt(variance + eps), then times the weight. Every sum
// has a fixed order, so every run gives the same bits.
template <int kInput, bool kNorm, int kStepRows, int kThreads>
struct GemvRowsInput {
  static constexpr int kSlice = static_cast<int>(gemvRowsSlice(kInput, kStepRows));
  static constexpr int kSlices = (kInput + kSlice - 1) / kSlice;
  static constexpr int kStride = static_cast<int>(gemvRowsStride(kInput, kStepRows));
  static constexpr int kFloats = static_cast<int>(gemvRowsSharedFloats(kInput, kStepRows, kNorm));
  static constexpr int kWarps = kThreads / kWarpSize;
  static_assert(kWarps <= kGemvRowsMaxWarps, "the sums of squares fit their words");
  // Rows and slices of whole 16-byte units are copied 16 bytes at a time
  // (buffers and parameters are 16-byte aligned:
  // runtime/format/ScheduleBlobBuilder.h).
  static constexpr int kWidth = kInput % 4 == 0 && kSlice % 4 == 0 ? 4 : 1;
  // Warps a row's sum of squares is cut over (at least one a row).
  static constexpr int kParts = kWarps / kStepRows > 1 ? kWarps / kStepRows : 1;

  const TaskContext &context;
  const MkOperationRecord &op;
  float *xs = context.shared; // [kStepRows][kStride]
  float *normWeights =
      context.shared + gemvRowsNormOffset(kInput, kStepRows); // [kSlice], kNorm
  float *squares = normWeights + kSlice;                       // [kStepRows][kParts], kNorm
  float *invRms = context.shared + kFloats - kStepRows;        // [kStepRows], kNorm
  const float *input = context.activations + op.input;

  __device__ static int sliceLength(int s) {
    return kInput - s * kSlice < kSlice ? kInput - s * kSlice : kSlice;
  }

  // Load: slice s of every row, and of the norm's weights with
  // `normWeightsToo`, into shared memory; then a barrier.
  __device__ __forceinline__ void copySlice(int s, bool normWeightsToo) const {
    const int first = s * kSlice, units = sliceLength(s) / kWidth;
    const int total = (kStepRows + (normWeightsToo ? 1 : 0)) * units;
#pragma unroll 1
    for (int u = threadIdx.x; u < total; u += kThreads) {
      const int m = u / units, k = (u % units) * kWidth;
      const float *from = m < kStepRows
                              ? input + static_cast<unsigned long long>(m) * kInput + first + k
                              : context.params + op.norm + first + k;
      float *into = m < kStepRows ? xs + m * kStride + k : normWeights + k;
      if constexpr (kWidth == 4)
        copyAsync16(into, from, true);
      else
        copyAsync4(into, from);
    }
    copyCommit();
    copyWait();
    consumerSync<kThreads>();
  }

  // Compute: each row's sum of squares over the slice in shared memory,
  // added to its partials, a warp's part at a time (each partial is one
  // warp's, so no two threads add to it).
  __device__ __forceinline__ void addSquares(int s) const {
    const int length = sliceLength(s);
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll 1
    for (int item = warp; item < kStepRows * kParts; item += kWarps) {
      const int m = item / kParts, part = item % kParts;
      const float *x = xs + m * kStride;
      float sum = 0.0f;
      for (int k = (part * kWarpSize + lane) * kWidth; k < length;
           k += kParts * kWarpSize * kWidth) {
#pragma unroll
        for (int i = 0; i < kWidth; ++i)
          sum = fmaf(x[k + i], x[k + i], sum);
      }
      sum = warpSum(sum);
      if (lane == 0)
        squares[item] = s == 0 ? sum : squares[item] + sum;
    }
  }

  // Compute: each row's inverse RMS from its partials (added in part
  // order), between barriers.
  __device__ __forceinline__ void finishNorms() const {
    consumerSync<kThreads>();
#pragma unroll 1
    for (int m = threadIdx.x; m < kStepRows; m += kThreads) {
      float total = 0.0f;
      for (int part = 0; part < kParts; ++part)
        total += squares[m * kParts + part];
      invRms[m] = 1.0f / sqrtf(total / static_cast<float>(kInput) + op.eps);
    }
    consumerSync<kThreads>();
  }

  // Before the first slice: where the rows come in several slices, their
  // inverse RMS, from a first pass over the slices.
  __device__ __forceinline__ void prepare() const {
    if constexpr (kNorm && kSlices > 1) {
      for (int s = 0; s < kSlices; ++s) {
        if (s > 0)
          consumerSync<kThreads>(); // every warp is done with the slice before
        copySlice(s, false);
        addSquares(s);
      }
      finishNorms();
    }
  }

  // Slice s of every row, normalized, into shared memory, then a barrier.
  // The caller's barrier goes before it where the slice's words were read.
  __device__ __forceinline__ void loadSlice(int s) const {
    copySlice(s, kNorm);
    if constexpr (kNorm) {
      if constexpr (kSlices == 1) {
        addSquares(0);
        finishNorms();
      }
      const int units = sliceLength(s) / kWidth;
#pragma unroll 1
      for (int u = threadIdx.x; u < kStepRows * units; u += kThreads) {
        const int m = u / units, k = (u % units) * kWidth;
        float *x = xs + m * kStride + k;
        const float scale = invRms[m];
#pragma unroll
        for (int i = 0; i < kWidth; ++i)
          x[i] = (x[i] * scale) * normWeights[k + i];
      }
      consumerSync<kThreads>();
    }
  }
};

// A step row's output: the bias, the epilogue (act(gate) * up, or the
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
      if constexpr (MK_EPILOGUE_GATED(kEpilogue))
        up += context.params[op.bias + op.outputLength + row];
    }
    float result = gate;
    if constexpr (MK_EPILOGUE_GATED(kEpilogue))
      result = gateActivation<kEpilogue>(gate) * up;
    const unsigned long long at = static_cast<unsigned long long>(m) * op.outputLength + row;
    if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
      result = context.activations[op.residual + at] + result;
    out[at] = result;
    return result;
  }
};

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
  constexpr bool kGated = MK_EPILOGUE_GATED(kEpilogue);
  constexpr int kGroupRows = kGated ? 8 : 16; // output rows of a warp's 16 weight rows
  constexpr int kSteps = (kInput + 31) / 32;  // of 32 input elements
  constexpr int kInFlight = static_cast<int>(kGemvRowsBatchSteps); // steps loaded at once
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int g = lane / 4, t = lane % 4;
  const Input in{context, op};
  const GemvRowsOutput<kEpilogue, kBias> output{context, op};

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
  // The lane's weight rows of a unit's group (A's rows g and g + 8), and
  // the unit's steps.
  struct Unit {
    const unsigned short *upper = nullptr, *lower = nullptr;
    int stepBegin = 0, stepEnd = 0;
  };
  auto unitOf = [&](int unit) {
    Unit u;
    const int group = unit / parts, part = unit % parts;
    const unsigned long long first = task.begin + static_cast<unsigned long long>(group) * kGroupRows;
    if constexpr (kGated) {
      const bool inside = first + g < task.end;
      u.upper = inside ? stackedRow<kInput>(context, op, first + g) : nullptr;
      u.lower = inside ? stackedRow<kInput>(context, op, op.outputLength + first + g) : nullptr;
    } else {
      u.upper = first + g < task.end ? stackedRow<kInput>(context, op, first + g) : nullptr;
      u.lower = first + g + 8 < task.end ? stackedRow<kInput>(context, op, first + g + 8) : nullptr;
    }
    u.stepBegin = part * stepsPerPart;
    u.stepEnd = min(kSteps, u.stepBegin + stepsPerPart);
    return u;
  };
  // A batch: the lane's 16 bytes of its two rows for kInFlight steps from
  // `base` (zeros past `end`, the rows and the tile).
  struct Batch {
    uint4 upper[kInFlight], lower[kInFlight];
  };
  auto loadBatch = [&](const Unit &u, int base, int end) {
    Batch batch;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const int k = (base + i) * 32 + 8 * t; // the lane's 8 input elements
      const bool inside = base + i < end && k < kInput;
      batch.upper[i] = u.upper != nullptr && inside ? loadWeights8(u.upper + k) : make_uint4(0, 0, 0, 0);
      batch.lower[i] = u.lower != nullptr && inside ? loadWeights8(u.lower + k) : make_uint4(0, 0, 0, 0);
    }
    return batch;
  };
  // The warp's first batch, copied (cp.async) into the lane's words of its
  // warp's stage before the task waits: in flight through the wait and the
  // input's load without holding registers (held in registers, the 1B
  // shape's kernel of 4 rows spilled 1.1 KB). Where the input is one slice,
  // so that the batch is the unit's first steps. (Copying each later
  // round's first batch the same way, during the round before, made that
  // kernel spill 108 bytes.)
  constexpr bool kStaged = Input::kSlices == 1;
  static_assert(kInFlight == kGemvRowsBatchSteps && kWarps <= kGemvRowsMaxWarps &&
                    (!kStaged || gemvRowsStageFloats(kInput, kStepRows) ==
                                     kGemvRowsMaxWarps * kGemvRowsBatchSteps * 2 * kWarpSize * 4),
                "the stages are what core/protocol/GemvGeometry.h reserves");
  uint4 *stage = reinterpret_cast<uint4 *>(context.shared +
                                           gemvRowsStageOffset(kInput, kStepRows, kNorm)) +
                 warp * 2 * kInFlight * kWarpSize + lane; // [2 * kInFlight][kWarpSize]
  auto copyFirstBatch = [&](const Unit &u) {
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const int k = (u.stepBegin + i) * 32 + 8 * t;
      const bool inside = u.stepBegin + i < u.stepEnd && k < kInput;
      copyWeightsAsync16(stage + (2 * i) * kWarpSize, u.upper + k, u.upper != nullptr && inside);
      copyWeightsAsync16(stage + (2 * i + 1) * kWarpSize, u.lower + k, u.lower != nullptr && inside);
    }
    copyCommit();
  };
  auto stagedBatch = [&]() {
    copyWait();
    Batch batch;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      batch.upper[i] = stage[(2 * i) * kWarpSize];
      batch.lower[i] = stage[(2 * i + 1) * kWarpSize];
    }
    return batch;
  };

  // Load, before the inputs are ready (weights need none of them): the
  // warp's first batch.
  if constexpr (kStaged) {
    if (warp < units)
      copyFirstBatch(unitOf(warp));
  }
  if (!awaitInputs())
    return;
  in.prepare();

  Candidate best[2] = {{0.0f, kNoIndex}, {0.0f, kNoIndex}}; // the lane's batch rows 2t, 2t + 1
  unsigned nonFinite[2] = {kNoIndex, kNoIndex};
  for (int first = 0; first < units; first += kWarps) {
    // One unit a warp this round.
    const int unit = first + warp;
    const int group = unit / parts, part = unit % parts;
    const bool working = unit < units;
    const Unit u = working ? unitOf(unit) : Unit{};
    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int s = 0; s < Input::kSlices; ++s) {
      if (Input::kSlices > 1 || first == 0) {
        if (first > 0 || s > 0)
          consumerSync<kThreads>(); // every warp is done with the slice before
        in.loadSlice(s);
      }
      const int sliceBegin = s * (Input::kSlice / 32);
      const int begin = max(u.stepBegin, sliceBegin);
      const int end = min(u.stepEnd, sliceBegin + (Input::kSlice + 31) / 32);
      const float *x = in.xs + g * Input::kStride - s * Input::kSlice; // by input element
      for (int base = begin; working && base < end; base += kInFlight) {
        const Batch batch =
            kStaged && first == 0 && base == begin ? stagedBatch() : loadBatch(u, base, end);
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
          const uint4 a = batch.upper[i], b = batch.lower[i];
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
  constexpr int kRows = MK_EPILOGUE_GATED(kEpilogue) ? 2 : 1;
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
  in.prepare();

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
        in.loadSlice(s);
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
                        gemvRowsSharedFloats(kInput, kStepRows, kNorm) &&
                    gemvRowsTotalFloats(kInput, kStepRows, kNorm) ==
                        static_cast<long long>(gemvSharedFloats(kInput, kEpilogue, kNorm, kBias,
                                                                kPicks, 0, kStepRows)),
                "the slices, the norms and the stages are what core/protocol/SharedMemory.h "
                "reserves");
  if constexpr (gemvRowsOnTensorCores(kInput, kStepRows))
    gemvRowsTensorCores<kInput, kEpilogue, kNorm, kBias, kPicks, kStepRows, kThreads>(
        context, task, op, awaitInputs);
  else
    gemvRowsCudaCores<kInput, kEpilogue, kNorm, kBias, kPicks, kStepRows, kThreads,
                      kLoadsInFlight>(context, task, op, awaitInputs);
}

} // namespace mk::gpu

#endif
