// Gemv: output rows [begin, end) of epilogue(concat_i(W_i * norm(x) + b_i))
// (runtime/cpu/GemvTask.cpp).
//
// Load: the whole input into shared memory (in two planes: gemvInputIndex);
// with a prologue norm, every tile normalizes it itself (sum of squares by
// the block, then the scale), since the input is short next to the weight
// rows and a separate norm task would cost an extra event on the critical
// path.
// Compute: groups of kLanes lanes take one output row each (the cut is
// core/protocol/GemvGeometry.h); a lane streams its share of the row's bf16
// weights in 16-byte loads, several in flight, accumulates in f32, and the
// group sums with shuffles. SiluMul rows read the gate row j and the up row
// N + j together; Residual adds the residual row. Weights never change in a
// launch, so the first batch needs no input: by default each thread loads
// its first batch of weights into registers before the task waits, so that
// they are in flight through the wait and the input's load and norm
// (kFirstWeights, core/protocol/GemvGeometry.h). Rows too short for a
// batch to hold the loads in flight wanted go through two stages of
// copies; longer rows load into registers. With a weight ring
// (WeightRing.cuh), the ring's producer has copied every pass of rows into
// shared memory instead.
// Store: the group's first lane writes the row; the logits' Gemv also its
// tile's pick (kPicks, Picks.cuh), which a greedy Argmax reads.
#ifndef MKC_CODEGEN_DEVICE_GEMVTASK_CUH
#define MKC_CODEGEN_DEVICE_GEMVTASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/GemvRowsTask.cuh"
#include "codegen/device/Picks.cuh"
#include "core/protocol/FixedPoint.h"
#include "core/protocol/GemvGeometry.h"
#include "codegen/device/WeightRing.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// Where x's element i lives in shared memory. Rows of whole 16-byte chunks
// keep x in two planes, elements 0-3 of every chunk of 8 in the first half,
// 4-7 in the second: a lane reads its chunk's x as two float4s that lie
// side by side with its neighbours', one shared-memory wavefront per eight
// lanes, where one array of chunks would put them 32 bytes apart and take
// two. x is read once per weight chunk, so this halves the shared-memory
// traffic of every gemv (which a weight ring adds to). Other rows keep x in
// order.
template <int kInput>
__device__ __forceinline__ int gemvInputIndex(int i) {
  if constexpr (kInput % 8 != 0)
    return i;
  else
    return ((i >> 3) << 2) + (i & 3) + ((i & 4) ? kInput / 2 : 0);
}

// `kFixedInput`: the input is an Mlp's Fixed64 output (core/protocol/
// FixedPoint.h), read as f32.
template <int kInput, bool kNorm, int kThreads, bool kFixedInput = false>
__device__ void loadGemvInput(const TaskContext &context, const MkOperationRecord &op, float *x) {
  const float *input = context.activations + op.input;
  const long long *fixedInput = reinterpret_cast<const long long *>(input);
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
  forEachInBatches<kInput, kThreads>([&](int i) {
                                       if constexpr (kFixedInput)
                                         return fixedToFloat(fixedInput[i]);
                                       else
                                         return input[i];
                                     },
                                     [&](int i, float value) {
                                       x[gemvInputIndex<kInput>(i)] = value;
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
          x[gemvInputIndex<kInput>(i)] = (x[gemvInputIndex<kInput>(i)] * invRms) * scales[j];
      }
    } else {
      forEachInBatches<kInput, kThreads>(
          [&](int i) { return weight[i]; },
          [&](int i, float scale) {
            x[gemvInputIndex<kInput>(i)] = (x[gemvInputIndex<kInput>(i)] * invRms) * scale;
          });
    }
  }
  consumerSync<kThreads>();
}

// One lane's part of kRows stacked weight rows (a row may be null for lanes
// past the tile: it contributes 0), streamed a batch of 16-byte chunks at a
// time: every load of a batch is issued before the first is used, so that
// kLoadsInFlight loads per lane are outstanding (one SM needs tens of
// kilobytes in flight to take its share of HBM bandwidth).
template <int kInput, int kRows, int kThreads, int kLoadsInFlight>
struct RowStream {
  static constexpr GemvGeometry kGeometry = gemvGeometry(kInput, kRows, kThreads, kLoadsInFlight);
  static constexpr bool kVector = kInput % 8 == 0; // else rowsDot reads scalars
  static constexpr int kLanes = kGeometry.lanes;
  static constexpr int kChunks = kGeometry.chunks;
  static constexpr int kPerLane = kGeometry.perLane;
  static constexpr int kBatch = kGeometry.batch;

  uint4 weights[kRows][kBatch];

  // `copied`: the batch's chunks are in the thread's slots (see copy).
  __device__ __forceinline__ void load(const unsigned short *const (&rows)[kRows], int lane,
                                       int base, const uint4 *copied) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int chunk = lane + (base + b) * kLanes;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        weights[r][b] = copied ? copied[(b * kRows + r) * kThreads + threadIdx.x]
                        : rows[r] == nullptr || chunk >= kChunks ? make_uint4(0, 0, 0, 0)
                                                                 : loadWeights8(rows[r] + chunk * 8);
    }
  }

  // The same loads, as copies into the thread's slots of shared memory
  // (cp.async: no registers held while they are in flight), zeros past the
  // rows; read by `load` once the copies' group has completed.
  // Slot b*kRows + r of a thread at slots[(b * kRows + r) * kThreads + tid].
  __device__ static __forceinline__ void copy(const unsigned short *const (&rows)[kRows], int lane,
                                              int base, uint4 *slots) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int chunk = lane + (base + b) * kLanes;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        bool inside = rows[r] != nullptr && chunk < kChunks;
        copyWeightsAsync16(slots + (b * kRows + r) * kThreads + threadIdx.x,
                           inside ? rows[r] + chunk * 8 : nullptr, inside);
      }
    }
  }
  // The same batch from a weight ring slot (WeightRing.cuh), where the
  // producer copied the lane's rows whole: weight row r's at inSlot[r].
  __device__ __forceinline__ void loadFromSlot(const unsigned short *const (&rows)[kRows],
                                               int lane, int base,
                                               const unsigned char *const (&inSlot)[kRows]) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int chunk = lane + (base + b) * kLanes;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        weights[r][b] = rows[r] == nullptr || chunk >= kChunks
                            ? make_uint4(0, 0, 0, 0)
                            : *reinterpret_cast<const uint4 *>(inSlot[r] + chunk * 16);
    }
  }

  // The batch's dot products with x, added to sums. Each x chunk is read
  // once for all rows.
  __device__ __forceinline__ void accumulate(const float *x, int lane, int base,
                                             float (&sums)[kRows]) const {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int chunk = lane + (base + b) * kLanes;
      if (chunk >= kChunks)
        continue;
      float4 x0 = *reinterpret_cast<const float4 *>(x + chunk * 4); // gemvInputIndex
      float4 x1 = *reinterpret_cast<const float4 *>(x + kInput / 2 + chunk * 4);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        sums[r] = dot8(weights[r][b], x0, x1, sums[r]);
    }
  }
};

// By one warp: the chunk weights of q head `headIndex`, whose chunks [0,
// chunks) (at most 64: two a lane) lie at `head`, headDim + 2 floats each
// (o, then its max score and its sum of exponentials). The largest max of
// the chunks holding positions, the sum of their sums rescaled to it
// (lanes over the chunks, shuffles of a fixed order), then each chunk's
// weight exp(m_c - max) / sum in place of its max, so that an element of the
// merged output is the chunks' o weighted so. A head with no position is an
// error (its weights 0); a NaN goes on to the logits.
__device__ __forceinline__ void weighHeadChunks(const TaskContext &context, float *head,
                                                int chunks, int headDim, long long headIndex) {
  const int lane = threadIdx.x % kWarpSize, length = headDim + 2;
  float m[2], l[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int c = lane + k * kWarpSize;
    l[k] = c < chunks ? head[c * length + headDim + 1] : 0.0f;
    m[k] = l[k] != 0.0f ? head[c * length + headDim] : negativeInfinity();
  }
  const float max = warpMax(fmaxf(m[0], m[1]));
  float scale[2];
#pragma unroll
  for (int k = 0; k < 2; ++k)
    scale[k] = l[k] != 0.0f ? expf(m[k] - max) : 0.0f;
  const float sum = warpSum(fmaf(l[1], scale[1], l[0] * scale[0]));
  if (sum == 0.0f && lane == 0)
    raiseError(context, MK_ERROR_EMPTY_ATTENTION, headIndex);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int c = lane + k * kWarpSize;
    if (c < chunks)
      head[c * length + headDim] = sum == 0.0f ? 0.0f : scale[k] / sum;
  }
}

// The input of a Gemv merging an attention's partials (MK_GEMV_MERGED_INPUT,
// o_proj with --merge-in-o-proj): in rounds of whole q heads, as many as
// the shared memory from `kStagingBegin` on holds (core/protocol/
// SharedMemory.h: gemvMergeStagingFloats), each round's chunks in use
// copied there at once by cp.async (8-byte pieces: a head's partials start
// 8-byte aligned, its length headDim + 2 even). Then a warp a head puts
// each chunk's weight in place of its max (weighHeadChunks); then each
// element (a q head's dimension) is the chunks' o weighted so.
// The weights depend on the head and the chunk only, so an element costs a
// multiply-add a chunk; with an exp and a divide an element and chunk
// (AttentionMerge's arithmetic) SmolLM2's o_proj took 11.2 us at 480 on the
// H200, with this 7.3 on an H100, against 1.8 with merge tasks: what is
// left is not yet timed apart (bench/results/2026-12-05-merge-in-o-proj).
// A NaN goes on to the logits; a head with no position is an error.
template <int kInput, int kThreads, int kStagingBegin, int kSharedBytes>
__device__ void loadMergedInput(const TaskContext &context, const MkOperationRecord &op,
                                float *x) {
  static_assert(kStagingBegin % 16 == 0 && kStagingBegin < kSharedBytes,
                "the staging lies inside the tasks' shared memory");
  constexpr int kStagingFloats = (kSharedBytes - kStagingBegin) / 4;
  constexpr int kWarps = kThreads / kWarpSize;
  float *staged = context.shared + kStagingBegin / 4;
  const float *partials = context.activations + op.input;
  const int headDim = static_cast<int>(op.headDim), heads = static_cast<int>(op.numHeads);
  const int length = headDim + 2;
  // At most 64 (the lowering's kMostChunks): two a lane.
  const int chunks = static_cast<int>(attentionWindowChunksInUse(
      context.position, op.window, op.chunksPerRound, op.numChunks, op.chunkSize));
  const int headFloats = chunks * length;
  const int perRound =
      headFloats > 0 && kStagingFloats / headFloats > 0 ? kStagingFloats / headFloats : 1;
  const int warp = threadIdx.x / kWarpSize;
  // The code generator sized the staging for the graph's chunks; a file
  // whose graph asks for more than it holds was not generated with it.
  if (headFloats > kStagingFloats || chunks > 2 * kWarpSize) {
    if (threadIdx.x == 0)
      raiseError(context, MK_ERROR_UNKNOWN_VARIANT, chunks);
    return;
  }
  for (int first = 0; first < heads; first += perRound) {
    const int count = min(perRound, heads - first);
    // Load: each head's chunks [0, chunks), contiguous in the partials.
    const int pairs = headFloats / 2;
#pragma unroll 1
    for (int u = threadIdx.x; u < count * pairs; u += kThreads) {
      const int h = u / pairs, within = 2 * (u % pairs);
      copyAsync8(staged + h * headFloats + within,
                 partials + static_cast<long long>(first + h) * op.numChunks * length + within);
    }
    copyCommit();
    copyWait();
    consumerSync<kThreads>();
    // Compute: each head's chunk weights, in place of the chunks' maxima.
#pragma unroll 1
    for (int h = warp; h < count; h += kWarps)
      weighHeadChunks(context, staged + h * headFloats, chunks, headDim, first + h);
    consumerSync<kThreads>();
    // Compute: each element of the round's heads into x.
#pragma unroll 1
    for (int e = threadIdx.x; e < count * headDim; e += kThreads) {
      const int h = e / headDim, d = e % headDim;
      const float *head = staged + h * headFloats;
      float value = 0.0f;
#pragma unroll 4
      for (int c = 0; c < chunks; ++c)
        value = fmaf(head[c * length + d], head[c * length + headDim], value);
      x[gemvInputIndex<kInput>((first + h) * headDim + d)] = value;
    }
    consumerSync<kThreads>(); // x is complete; the staging may be written again
  }
}

// kFixed: MK_GEMV_* bits (core/protocol/FixedPoint.h): a Fixed64
// input or residual read as f32, the rows stored again as fixed point
// into the Mlp output they seed (op.seed), or the input an attention's
// partials merged (loadMergedInput). kFirstWeights: where the first
// batch of weights is issued (kGemvFirst*, core/protocol/GemvGeometry.h).
template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kFixed,
          int kThreads, int kLoadsInFlight, int kEarlySlots, int kFirstWeights,
          int kSharedBytes, int kRingSlots, int kRingSlotBytes, class AwaitInputs>
__device__ void gemvOneRowTask(const TaskContext &context, const MkTaskRecord &task,
                               const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  static_assert(kInput == gemvSharedFloats(kInput, kEpilogue, kNorm, kBias, kPicks),
                "x is what core/protocol/SharedMemory.h reserves");
  // A SiluMul output row needs the gate row j and the up row N + j.
  constexpr int kRows = MK_EPILOGUE_GATED(kEpilogue) ? 2 : 1;
  using Stream = RowStream<kInput, kRows, kThreads, kLoadsInFlight>;
  constexpr int kLanes = Stream::kLanes;
  constexpr int kRowsPerWarp = Stream::kGeometry.rowsPerWarp;
  constexpr int kRowsPerPass = Stream::kGeometry.warps * kRowsPerWarp;
  static_assert(kRowsPerPass == kThreads / kLanes, "every lane has a row");
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kLanes;
  int groupInWarp = (threadIdx.x % kWarpSize) / kLanes;
  float *out = context.activations + op.output;
  // A lane's rows in the pass starting at `first` (null past the tile).
  auto rowsAt = [&](unsigned long long first, const unsigned short *(&rows)[kRows]) {
    unsigned long long row = first + groupInWarp;
    bool active = row < task.end;
    rows[0] = active ? stackedRow<kInput>(context, op, row) : nullptr;
    if constexpr (kRows == 2)
      rows[1] = active ? stackedRow<kInput>(context, op, op.outputLength + row) : nullptr;
  };

  // The warp's batches of weights, pass by pass (the loop bound is the
  // warp's first row, so a warp's lanes run the same passes and every
  // shuffle has all 32 of them). Batch 0 goes out where kFirstWeights
  // says: by default into registers before the task waits (`first`; where a
  // pass is one batch, each pass then issues the next pass's into it);
  // copied into the thread's slots of shared memory where the kernel left
  // them (kEarlySlots), which measured slower (the SM's event polls queue
  // behind the copies, KernelOptions). Rows too short to give a batch the
  // loads in flight wanted cannot cover HBM's latency with one batch:
  // there, with two stages of slots, batch i + 1 is copied while batch i
  // is summed. Longer rows load into registers: the copies' round trip
  // through shared memory measured 6% slower on the Llama-3.2-1B shape, the
  // second stage 15% faster on SmolLM2-135M (bench/NOTES.md). A pass's
  // batches are a loop of constant bound, which the compiler unrolls and
  // whose loads it issues ahead of the sums before them (a loop over the
  // warp's batches with a bound known at run time measured 5% slower).
  // With a weight ring, its producer streams every pass of rows into
  // shared memory ahead of the task (WeightRing.cuh) and none is copied
  // here.
  constexpr bool kRing = kRingSlots > 0 && Stream::kVector;
  using Ring = GemvWeightRing<kRing ? kRingSlots : 1, kRingSlotBytes, kThreads>;
  const Ring ring{context.ring};
  constexpr GemvGeometry kGeometry = Stream::kGeometry;
  const GemvRingOrder order(kGeometry, task.end - task.begin, kRingSlotBytes);
  constexpr int kStageSlots = gemvBatchChunks(kGeometry);
  constexpr bool kShortRows = gemvShortRows(kGeometry, kLoadsInFlight);
  constexpr int kStages =
      !Stream::kVector || kRing                                         ? 0
      : kShortRows && kEarlySlots >= 2 * kStageSlots                    ? 2
      : kFirstWeights == kGemvFirstCopied && kEarlySlots >= kStageSlots ? 1
                                                                        : 0;
  // Batch 0 in registers, issued before or right after the wait.
  constexpr bool kFirstInRegisters =
      Stream::kVector && !kRing && kStages == 0 &&
      (kFirstWeights == kGemvFirstBeforeWait || kFirstWeights == kGemvFirstAfterWait);
  static_assert(kStages == 0 || gemvSharedBytesWithEarlyWeights(kInput, kThreads, kEarlySlots) <=
                                    kSharedBytes,
                "the weight slots fit the kernel's shared memory");
  constexpr int kBatchesPerPass = (Stream::kPerLane + Stream::kBatch - 1) / Stream::kBatch;
  uint4 *slots = reinterpret_cast<uint4 *>(reinterpret_cast<char *>(context.shared) +
                                           gemvEarlyWeightsOffset(kInput));
  auto stage = [&](int i) { return slots + (i % 2) * kStageSlots * kThreads; };
  const unsigned long long warpFirst = task.begin + warp * kRowsPerWarp;
  const int batches =
      warpFirst < task.end
          ? static_cast<int>((task.end - warpFirst + kRowsPerPass - 1) / kRowsPerPass) *
                kBatchesPerPass
          : 0;
  auto copyBatch = [&](int i) {
    const unsigned short *rows[kRows];
    rowsAt(warpFirst + static_cast<unsigned long long>(i / kBatchesPerPass) * kRowsPerPass, rows);
    Stream::copy(rows, lane, (i % kBatchesPerPass) * Stream::kBatch, stage(i));
    copyCommit();
  };

  // Load, before the input is ready: the first batch.
  Stream first;
  auto loadFirst = [&]() {
    const unsigned short *rows[kRows];
    rowsAt(warpFirst, rows);
    first.load(rows, lane, 0, nullptr);
  };
  if (kStages > 0 && batches > 0)
    copyBatch(0);
  if constexpr (kFirstInRegisters && kFirstWeights == kGemvFirstBeforeWait)
    loadFirst();
  if (!awaitInputs())
    return;
  if constexpr (kFirstInRegisters && kFirstWeights == kGemvFirstAfterWait)
    loadFirst();
  float *x = context.shared; // [kInput]
  if constexpr ((kFixed & MK_GEMV_MERGED_INPUT) != 0) {
    static_assert(!kNorm, "a merged input has no norm");
    loadMergedInput<kInput, kThreads,
                    static_cast<int>(gemvMergeStagingOffset(kInput, kThreads, kEarlySlots)),
                    kSharedBytes>(context, op, x);
  } else {
    loadGemvInput<kInput, kNorm, kThreads, (kFixed & MK_GEMV_FIXED_INPUT) != 0>(context, op, x);
  }

  // Compute and store, a pass of rows at a time.
  Candidate best{0.0f, kNoIndex}; // kPicks: this thread's
  unsigned nonFinite = kNoIndex;
  // A row's residual, read before its weights are summed, so that its
  // latency hides behind theirs.
  auto residualOf = [&](unsigned long long row, bool active) {
    float residual = 0.0f;
    if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL) {
      if constexpr ((kFixed & MK_GEMV_FIXED_RESIDUAL) != 0)
        residual = active && lane == 0 ? fixedToFloat(reinterpret_cast<const long long *>(
                                             context.activations + op.residual)[row])
                                       : 0.0f;
      else
        residual = active && lane == 0 ? context.activations[op.residual + row] : 0.0f;
    }
    return residual;
  };
  // The group's sums of a row: bias, epilogue, store (and the pick).
  auto finishRow = [&](float (&sums)[kRows], unsigned long long row, bool active,
                       float residual) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      sums[r] = groupSum<kLanes>(sums[r]);
      if constexpr (kBias)
        sums[r] += active ? context.params[op.bias + r * op.outputLength + row] : 0.0f;
    }
    float result = sums[0];
    if constexpr (MK_EPILOGUE_GATED(kEpilogue))
      result = gateActivation<kEpilogue>(sums[0]) * sums[1];
    else if constexpr (kEpilogue == MK_EPILOGUE_RESIDUAL)
      result = residual + result;
    if (active && lane == 0) {
      out[row] = result;
      if constexpr ((kFixed & MK_GEMV_SEEDS) != 0)
        reinterpret_cast<long long *>(context.activations + op.seed)[row] = floatToFixed(result);
      if constexpr (kPicks)
        considerPick(best, nonFinite, result, row);
    }
  };

  for (int pass = 0; pass * kBatchesPerPass < batches; ++pass) {
    unsigned long long row = warpFirst + static_cast<unsigned long long>(pass) * kRowsPerPass +
                             groupInWarp;
    bool active = row < task.end;
    float residual = residualOf(row, active);
    const unsigned short *rows[kRows];
    rowsAt(row - groupInWarp, rows);
    float sums[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      sums[r] = 0.0f;
    if constexpr (!Stream::kVector) {
      // Rows not a multiple of 16 bytes cannot be read in 16-byte loads.
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (rows[r] != nullptr)
          for (int k = lane; k < kInput; k += kLanes)
            sums[r] = fmaf(bf16ToFloat(rows[r][k]), x[k], sums[r]);
    } else {
      // The pass's rows in the ring: the slot of this warp's group of warps.
      unsigned long long position = 0;
      const unsigned char *inSlot[kRows] = {};
      if constexpr (kRing) {
        position = context.ringPosition + order.place(pass, warp);
        const unsigned char *slot = ring.acquire(context, position);
        const int firstWarp = warp / order.warpsPerSlot * order.warpsPerSlot;
        const int held = min(order.warpsPerSlot, order.warpsAt(pass) - firstWarp);
#pragma unroll
        for (int r = 0; r < kRows; ++r)
          inSlot[r] = slot + ringRowOffset(kGeometry, held * kRowsPerWarp, r, warp - firstWarp,
                                           groupInWarp);
      }
      for (int j = 0; j < kBatchesPerPass; ++j) {
        const int i = pass * kBatchesPerPass + j;
        Stream batch;
        if constexpr (kRing) {
          batch.loadFromSlot(rows, lane, j * Stream::kBatch, inSlot);
        } else if (kStages == 2 || (kStages == 1 && i == 0)) {
          if (kStages == 2 && i + 1 < batches) {
            copyBatch(i + 1);
            copyWaitAllBut<1>();
          } else {
            copyWaitAllBut<0>();
          }
          batch.load(rows, lane, j * Stream::kBatch, stage(i));
        } else if (kFirstInRegisters && (i == 0 || kBatchesPerPass == 1)) {
          batch = first;
        } else {
          batch.load(rows, lane, j * Stream::kBatch, nullptr);
        }
        batch.accumulate(x, lane, j * Stream::kBatch, sums);
        // The next pass's first batch, in flight through this pass's sums
        // and store (issued once this batch's registers are free), where a
        // pass is one batch (rows of up to 2048 on the 1B shape: qkv, o_proj,
        // lm_head). For passes of several batches it made gate_up slower and
        // Qwen2.5-1.5B spill (bench/NOTES.md, 2026-12-04).
        if (kFirstInRegisters && kBatchesPerPass == 1 && i + 1 < batches) {
          const unsigned short *next[kRows];
          rowsAt(warpFirst + static_cast<unsigned long long>(pass + 1) * kRowsPerPass, next);
          first.load(next, lane, 0, nullptr);
        }
      }
      if constexpr (kRing)
        ring.release(position);
    }
    finishRow(sums, row, active, residual);
  }
  if constexpr (kPicks)
    storePick<kThreads>(context.activations + op.partials, task, best, nonFinite);
}

// A step of one row (decode), or of several (GemvRowsTask.cuh).
template <int kInput, int kEpilogue, bool kNorm, bool kBias, bool kPicks, int kFixed,
          int kStepRows, int kThreads, int kLoadsInFlight, int kEarlySlots, int kFirstWeights,
          int kSharedBytes, int kRingSlots, int kRingSlotBytes, class AwaitInputs>
__device__ void gemvTask(const TaskContext &context, const MkTaskRecord &task,
                         const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if constexpr (kStepRows == 1) {
    gemvOneRowTask<kInput, kEpilogue, kNorm, kBias, kPicks, kFixed, kThreads, kLoadsInFlight,
                   kEarlySlots, kFirstWeights, kSharedBytes, kRingSlots,
                   kRingSlotBytes>(context, task, op, awaitInputs);
  } else {
    static_assert(kFixed == 0, "fixed-point inputs and seeds are of one row a step");
    gemvRowsTask<kInput, kEpilogue, kNorm, kBias, kPicks, kStepRows, kThreads, kLoadsInFlight>(
        context, task, op, awaitInputs);
  }
}

} // namespace mk::gpu

#endif
