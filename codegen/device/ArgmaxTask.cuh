// Argmax: the next token, the lowest index among the largest logits, or
// sampled as the control block's settings ask (core/protocol/Sampling.h,
// SamplingTask.cuh; runtime/cpu/ArgmaxTask.cpp), and the end of a step for
// the host: the token goes to the token slot (the next step's Embed reads
// it), to the step's output, to the context's tokens (the repetition
// penalty's) and, when streaming, to host memory (MkStream); the logits and a
// timestamp to the control block when asked; and an EOS from the control
// block's first EOS step on, or the host's cancel, sets the stop flag, which
// every CTA reads once this task's event has fired.
//
// Load and compute: greedy, from the lm_head tiles' picks where it writes
// them (a pair a tile, Picks.cuh); else each thread scans a strided share of
// the logits keeping its first largest; warps and then the block combine
// (larger value, or equal value and lower index). A NaN or infinity anywhere raises
// MK_ERROR_NON_FINITE_LOGIT with the lowest such index and stops the launch.
// With a repetition penalty, all of this reads a penalized copy of the
// logits (SamplingTask.cuh). Store: one thread.
#ifndef MKC_CODEGEN_DEVICE_ARGMAXTASK_CUH
#define MKC_CODEGEN_DEVICE_ARGMAXTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Picks.cuh"
#include "codegen/device/SamplingTask.cuh"
#include "codegen/device/StepRows.cuh"

namespace mk::gpu {

// Streaming: the host's cancel, read (over the bus: a volatile load of
// host memory) before the task waits on its inputs, so that its latency
// hides behind the wait; 0 when not streaming.
__device__ __forceinline__ unsigned readCancel(const MkControlBlock *control) {
  if (!control->stream)
    return 0;
  return *reinterpret_cast<const volatile unsigned *>(
      &reinterpret_cast<const MkStream *>(control->stream)->cancel);
}

// Streaming: the step's token into host memory, then, once it is visible
// to the system, the count that tells the host so.
__device__ __forceinline__ void publishToken(MkControlBlock *control, long long step,
                                             long long token) {
  if (!control->stream || !control->streamTokens)
    return;
  MkStream *stream = reinterpret_cast<MkStream *>(control->stream);
  reinterpret_cast<volatile long long *>(control->streamTokens)[step] = token;
  __threadfence_system();
  asm volatile("st.release.sys.global.s64 [%0], %1;" ::"l"(&stream->published), "l"(step + 1)
               : "memory");
}

// Whether `token` is one of the control block's EOS tokens.
__device__ __forceinline__ bool isEosToken(const MkControlBlock *control, long long token) {
  const long long *eos = reinterpret_cast<const long long *>(control->eosTokens);
  for (unsigned i = 0; i < control->numEos; ++i)
    if (eos[i] == token)
      return true;
  return false;
}

// Load and compute over the whole vocabulary: each thread scans a strided
// share keeping its first largest, then the block combines. Four logits per
// 16-byte load when the logits are so aligned, several loads in flight per
// thread: one SM reads the whole vocabulary, so this is the step's tail.
// Copies the logits to the control block when it asks for them.
// `keptRow`: where the logits go among the control block's (step x rows + row).
template <int kVocab, int kThreads>
__device__ Candidate scanLogits(const TaskContext &context, const float *logits,
                                unsigned &firstNonFinite, Candidate *warpBests,
                                unsigned long long keptRow) {
  const MkControlBlock *control = context.control;
  Candidate best{negativeInfinity(), kNoIndex};
  float *kept = control->logits
                    ? reinterpret_cast<float *>(control->logits) + keptRow * kVocab
                    : nullptr;
  auto consider = [&](float value, unsigned i) {
    if (kept)
      kept[i] = value;
    if (!isFinite(value))
      atomicMin(&firstNonFinite, i);
    else if (value > best.value || best.index == kNoIndex)
      best = Candidate{value, i};
  };
  unsigned vectorEnd = 0;
  if (reinterpret_cast<unsigned long long>(logits) % 16 == 0) {
    constexpr unsigned kQuads = kVocab / 4;
    const float4 *quads = reinterpret_cast<const float4 *>(logits);
    constexpr int kInFlight = 8;
    for (unsigned first = threadIdx.x; first < kQuads; first += kInFlight * kThreads) {
      float4 v[kInFlight];
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) {
        unsigned q = first + j * kThreads;
        v[j] = q < kQuads ? quads[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int j = 0; j < kInFlight; ++j) {
        unsigned q = first + j * kThreads;
        if (q < kQuads) {
          consider(v[j].x, 4 * q);
          consider(v[j].y, 4 * q + 1);
          consider(v[j].z, 4 * q + 2);
          consider(v[j].w, 4 * q + 3);
        }
      }
    }
    vectorEnd = kQuads * 4;
  }
  for (unsigned i = vectorEnd + threadIdx.x; i < kVocab; i += kThreads)
    consider(logits[i], i);
  return blockBest<kThreads>(best, warpBests);
}

// Greedy from the lm_head tiles' picks (a pair a tile, Picks.cuh) instead
// of the vocabulary: each thread's best of a strided share, then the
// block's. A non-finite pick carries its tile's lowest non-finite index,
// so their lowest is the scan's.
template <int kThreads>
__device__ __forceinline__ Candidate bestOfPicks(const float2 *picks, unsigned count,
                                                 unsigned &firstNonFinite, Candidate *warpBests) {
  Candidate best{negativeInfinity(), kNoIndex};
  for (unsigned i = threadIdx.x; i < count; i += kThreads) {
    float2 pick = picks[i];
    unsigned index = __float_as_uint(pick.y);
    if (isnan(pick.x))
      atomicMin(&firstNonFinite, index);
    else
      best = better(best, Candidate{pick.x, index});
  }
  return blockBest<kThreads>(best, warpBests);
}

// The same over one warp (a row of a batch's picks, each row a warp's):
// the lane's best of a strided share, then the warp's; `nonFinite` the
// lowest non-finite pick's index (kNoIndex: none), the warp's too.
__device__ __forceinline__ Candidate warpBestOfPicks(const float2 *picks, unsigned count,
                                                     unsigned &nonFinite) {
  const unsigned lane = threadIdx.x % kWarpSize;
  Candidate best{negativeInfinity(), kNoIndex};
  nonFinite = kNoIndex;
  for (unsigned i = lane; i < count; i += kWarpSize) {
    const float2 pick = picks[i];
    const unsigned index = __float_as_uint(pick.y);
    if (isnan(pick.x))
      nonFinite = min(nonFinite, index);
    else
      best = better(best, Candidate{pick.x, index});
  }
  nonFinite = warpLowest(nonFinite);
  return warpBest(best);
}

template <int kVocab, int kThreads, class AwaitInputs>
__device__ void argmaxOneRowTask(const TaskContext &context, const MkTaskRecord &,
                                 const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  constexpr int kWarps = kThreads / kWarpSize;
  constexpr unsigned kNone = kNoIndex;
  __shared__ Candidate warpBests[kWarps];
  __shared__ unsigned firstNonFinite;
  const float *logits = context.activations + op.input;
  MkControlBlock *control = context.control;
  if (threadIdx.x == 0)
    firstNonFinite = kNone;
  const unsigned cancelled = threadIdx.x == 0 ? readCancel(control) : 0;
  if (!awaitInputs()) // its barrier also publishes firstNonFinite
    return;
  const bool greedy = mk_sampling_is_greedy(&control->sampling);
  Candidate best{negativeInfinity(), kNone};
  if (op.partials != MK_NO_OFFSET && greedy && !mk_sampling_has_penalty(&control->sampling) &&
      !control->logits) {
    best = bestOfPicks<kThreads>(reinterpret_cast<const float2 *>(context.activations + op.partials),
                                 static_cast<unsigned>(op.numChunks), firstNonFinite, warpBests);
  } else {
    logits = penalizeRepetitions<kVocab, kThreads>(context, logits);
    best = scanLogits<kVocab, kThreads>(context, logits, firstNonFinite, warpBests,
                                        static_cast<unsigned long long>(context.step));
  }
  unsigned chosen = best.index;
  if (firstNonFinite == kNone && !greedy) {
    unsigned sampled = sampleToken<kVocab, kThreads>(context, logits, best.value, context.position);
    if (sampled != 0xffffffffu)
      chosen = sampled;
  }

  // Store.
  if (threadIdx.x != 0)
    return;
  if (firstNonFinite != kNone) {
    raiseError(context, MK_ERROR_NON_FINITE_LOGIT, firstNonFinite);
    control->stop = 1;
    return;
  }
  long long token = chosen;
  *reinterpret_cast<long long *>(context.activations + context.header->tokenSlot) = token;
  reinterpret_cast<long long *>(control->outputTokens)[context.step] = token;
  if (control->contextTokens && context.step + 1 >= control->forcedSteps)
    reinterpret_cast<long long *>(control->contextTokens)[context.position + 1] = token;
  if (cancelled)
    control->stop = 1; // as an EOS: every CTA ends after this step
  publishToken(control, context.step, token);
  if (control->timestamps)
    reinterpret_cast<unsigned long long *>(control->timestamps)[context.step] = globalTimer();
  control->stepsDone = context.step + 1;
  if (context.step >= control->eosFromStep && isEosToken(control, token))
    control->stop = 1;
}

// Store: row r's token of a batch step, into its token slot and the
// step's outputs; a row that picks an EOS from its eosFromStep on idles
// from the next step. Returns whether the row runs the next step.
__device__ __forceinline__ bool storeRowToken(const TaskContext &context, MkRowPlan &plan,
                                              long long *slots, long long *outputs, int r,
                                              long long token) {
  slots[r] = token;
  outputs[r] = token;
  if (context.step >= plan.eosFromStep && isEosToken(context.control, token))
    plan.activeUntil = context.step + 1;
  return context.step + 1 < plan.activeUntil;
}

// Store: a batch step's end for the host (one thread); the launch stops
// after it once no row runs on, or when cancelled.
__device__ __forceinline__ void endRowsStep(const TaskContext &context, bool runsOn,
                                            unsigned cancelled) {
  MkControlBlock *control = context.control;
  if (control->timestamps)
    reinterpret_cast<unsigned long long *>(control->timestamps)[context.step] = globalTimer();
  control->stepsDone = context.step + 1;
  if (!runsOn || cancelled)
    control->stop = 1; // every CTA ends after this step
}

// A step of several rows (a batch): each active row's token, greedy from
// its lm_head picks or its logits, or sampled from its logits with the
// row's own position as the generator's counter, after the repetition
// penalty of the row's own context tokens (MkRowPlan.contextTokens, which
// the row's picks extend), into its token slot and the step's outputs;
// a row that picks an EOS from its eosFromStep on idles from the next step
// (MkRowPlan.activeUntil), and once no row runs the next step the launch
// stops after this one. Idle rows pick nothing (-1 among the outputs) and
// keep their token slot.
template <int kVocab, int kStepRows, int kThreads, class AwaitInputs>
__device__ void argmaxRowsTask(const TaskContext &context, const MkTaskRecord &,
                               const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  __shared__ Candidate warpBests[kThreads / kWarpSize];
  __shared__ unsigned firstNonFinite;
  MkControlBlock *control = context.control;
  if (threadIdx.x == 0)
    firstNonFinite = kNoIndex;
  const unsigned cancelled = threadIdx.x == 0 ? readCancel(control) : 0;
  if (!awaitInputs()) // its barrier also publishes firstNonFinite
    return;
  long long *slots = reinterpret_cast<long long *>(context.activations + context.header->tokenSlot);
  long long *outputs = reinterpret_cast<long long *>(control->outputTokens) +
                       static_cast<unsigned long long>(context.step) * kStepRows;
  const bool greedy = mk_sampling_is_greedy(&control->sampling);
  const bool penalty = mk_sampling_has_penalty(&control->sampling);
  if (op.partials != MK_NO_OFFSET && greedy && !penalty && !control->logits) {
    // Greedy from the picks: a warp a row, all rows at once (a row's picks
    // are a pair a tile, too few for a block's barriers to pay).
    // Bit 0: some row runs the next step; bit 1: some row's logits were
    // not finite (the launch stops with the error).
    __shared__ unsigned rowsRunOn;
    if (threadIdx.x == 0)
      rowsRunOn = 0;
    consumerSync<kThreads>();
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll 1
    for (int r = warp; r < kStepRows; r += kThreads / kWarpSize) {
      MkRowPlan &plan = reinterpret_cast<MkRowPlan *>(control->rowPlans)[r];
      if (!stepRow<kStepRows>(context, r).active) {
        if (lane == 0)
          outputs[r] = -1;
        continue;
      }
      unsigned nonFinite;
      const Candidate best = warpBestOfPicks(
          reinterpret_cast<const float2 *>(context.activations + op.partials) +
              static_cast<unsigned long long>(r) * op.numChunks,
          static_cast<unsigned>(op.numChunks), nonFinite);
      if (nonFinite != kNoIndex) {
        if (lane == 0) {
          raiseError(context, MK_ERROR_NON_FINITE_LOGIT, nonFinite);
          control->stop = 1;
          atomicOr(&rowsRunOn, 2u);
        }
        break;
      }
      if (lane == 0 && storeRowToken(context, plan, slots, outputs, r, best.index))
        atomicOr(&rowsRunOn, 1u);
    }
    consumerSync<kThreads>(); // every row's pick, and rowsRunOn
    if (threadIdx.x == 0 && (rowsRunOn & 2u) == 0)
      endRowsStep(context, (rowsRunOn & 1u) != 0, cancelled);
    return;
  }

  // Over the logits (the control block keeps them, there are no picks, or
  // the rows sample): the block a row, one row after another.
  bool runsOn = false; // some row runs the next step
#pragma unroll 1
  for (int r = 0; r < kStepRows; ++r) {
    MkRowPlan &plan = reinterpret_cast<MkRowPlan *>(control->rowPlans)[r];
    const StepRow row = stepRow<kStepRows>(context, r);
    if (!row.active) {
      if (threadIdx.x == 0)
        outputs[r] = -1;
      continue;
    }
    const float *logits = context.activations + op.input + static_cast<unsigned long long>(r) * kVocab;
    long long *rowTokens = reinterpret_cast<long long *>(plan.contextTokens);
    if (penalty) // a tag per step and row: the rows share the marks
      logits = penalizeTokens<kVocab, kThreads>(
          context, logits, rowTokens, row.position,
          control->penaltyTag + static_cast<unsigned long long>(context.step) * kStepRows + r + 1);
    const Candidate best =
        scanLogits<kVocab, kThreads>(context, logits, firstNonFinite, warpBests,
                                     static_cast<unsigned long long>(context.step) * kStepRows + r);
    consumerSync<kThreads>(); // firstNonFinite, and warpBests free for the next row
    if (firstNonFinite != kNoIndex) {
      if (threadIdx.x == 0) {
        raiseError(context, MK_ERROR_NON_FINITE_LOGIT, firstNonFinite);
        control->stop = 1;
      }
      return;
    }
    unsigned chosen = best.index;
    if (!greedy) {
      const unsigned sampled = sampleToken<kVocab, kThreads>(context, logits, best.value, row.position);
      if (sampled != 0xffffffffu)
        chosen = sampled;
    }
    if (threadIdx.x == 0) {
      // The row's next position holds its pick once the row feeds it (the
      // host's buffer has a slot past the context's last position).
      if (rowTokens && context.step + 1 >= plan.forcedSteps)
        rowTokens[row.position + 1] = chosen;
      runsOn |= storeRowToken(context, plan, slots, outputs, r, chosen);
    }
  }
  if (threadIdx.x == 0)
    endRowsStep(context, runsOn, cancelled);
}

template <int kVocab, int kStepRows, int kThreads, class AwaitInputs>
__device__ void argmaxTask(const TaskContext &context, const MkTaskRecord &task,
                           const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if constexpr (kStepRows == 1)
    argmaxOneRowTask<kVocab, kThreads>(context, task, op, awaitInputs);
  else
    argmaxRowsTask<kVocab, kStepRows, kThreads>(context, task, op, awaitInputs);
}

} // namespace mk::gpu

#endif
