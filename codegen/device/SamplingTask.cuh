// The argmax task's sampling: core/protocol/Sampling.h's steps on the
// device, the same floats in the same order as its CPU reference
// (core/kernels/Sampling.cpp). The parallel parts decide nothing by float
// order: the repetition penalty (each token penalized once, by whichever
// thread marks it first), the weights (one per token), the lanes' sums (each
// lane one thread, from its chunk's first token) and the candidates (a radix
// select on unique integer keys, then a sort). What adds floats across
// tokens or lanes in order is done by one thread, as the reference does.
//
// Shared memory: core/protocol/SharedMemory.h's MK_SAMPLING_* layout, in the
// task's dynamic shared floats.
#ifndef MKC_CODEGEN_DEVICE_SAMPLINGTASK_CUH
#define MKC_CODEGEN_DEVICE_SAMPLINGTASK_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/Sampling.h"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

struct SamplingShared {
  unsigned long long *keys; // [MK_SAMPLING_MAX_CANDIDATES]
  float *weights;           // [MK_SAMPLING_MAX_CANDIDATES]
  float *laneSums;          // [MK_SAMPLING_LANES]
  unsigned *histogram;      // [256]
  unsigned *scalars;        // [8]: see the kScalar* names
};

constexpr int kScalarCollected = 0, kScalarToken = 1, kScalarShift = 2, kScalarPrefixLow = 3,
              kScalarPrefixHigh = 4, kScalarRemaining = 5;

__device__ __forceinline__ SamplingShared samplingShared(float *shared) {
  return SamplingShared{reinterpret_cast<unsigned long long *>(shared + MK_SAMPLING_KEYS_OFFSET),
                        shared + MK_SAMPLING_WEIGHTS_OFFSET, shared + MK_SAMPLING_LANE_SUMS_OFFSET,
                        reinterpret_cast<unsigned *>(shared + MK_SAMPLING_HISTOGRAM_OFFSET),
                        reinterpret_cast<unsigned *>(shared + MK_SAMPLING_SCALARS_OFFSET)};
}

// Step 1: the logits to pick from. Without a penalty, the task's input;
// with one, a copy (the control block's penaltyLogits: the input stays as
// lm_head wrote it) in which every distinct token of `tokens`' positions
// [0, position] is penalized once: the mark `tag` says which thread does
// it, so every sequence and step needs a tag of its own. Every thread
// calls it in uniform control flow. A batch penalizes its rows one after
// another through the same copy and marks (argmaxRowsTask), each row's
// tokens its own.
template <int kVocab, int kThreads>
__device__ const float *penalizeTokens(const TaskContext &context, const float *logits,
                                       const long long *tokens, long long position,
                                       unsigned long long tag) {
  const MkControlBlock *control = context.control;
  if (!mk_sampling_has_penalty(&control->sampling) || !tokens || !control->penaltyMarks ||
      !control->penaltyLogits)
    return logits;
  float *penalized = reinterpret_cast<float *>(control->penaltyLogits);
  consumerSync<kThreads>(); // whoever read the copy before (a batch's previous row) is done
  for (unsigned i = threadIdx.x; i < kVocab; i += kThreads)
    penalized[i] = logits[i];
  consumerSync<kThreads>();
  unsigned long long *marks = reinterpret_cast<unsigned long long *>(control->penaltyMarks);
  float penalty = control->sampling.repetitionPenalty;
  for (long long j = threadIdx.x; j <= position; j += kThreads) {
    long long token = tokens[j];
    if (token >= 0 && token < kVocab && atomicExch(&marks[token], tag) != tag)
      penalized[token] = mk_sampling_penalize(logits[token], penalty);
  }
  consumerSync<kThreads>();
  return penalized;
}

// The same for a step of one row: the control block's context tokens, the
// step's position, the launch's tag for the step.
template <int kVocab, int kThreads>
__device__ const float *penalizeRepetitions(const TaskContext &context, const float *logits) {
  const MkControlBlock *control = context.control;
  return penalizeTokens<kVocab, kThreads>(
      context, logits, reinterpret_cast<const long long *>(control->contextTokens),
      context.position,
      control->penaltyTag + static_cast<unsigned long long>(context.step) + 1);
}

// Each lane's sum of its chunk's weights (min-p applied when asked), by
// the threads that own the lanes; a barrier ends it.
template <int kVocab, int kThreads>
__device__ void sumLanes(const float *logits, const MkSamplingSettings &s, float largest,
                         bool withMinP, float *laneSums) {
  constexpr unsigned long long kChunk = (kVocab + MK_SAMPLING_LANES - 1) / MK_SAMPLING_LANES;
  for (int lane = threadIdx.x; lane < MK_SAMPLING_LANES; lane += kThreads) {
    float sum = 0.0f;
    unsigned long long end = (lane + 1) * kChunk < kVocab ? (lane + 1) * kChunk : kVocab;
    for (unsigned long long i = lane * kChunk; i < end; ++i) {
      float w = mk_sampling_weight(logits[i], largest, s.temperature);
      sum = mk_fadd(sum, withMinP && w < s.minP ? 0.0f : w);
    }
    laneSums[lane] = sum;
  }
  consumerSync<kThreads>();
}

// One thread: the draw over the whole vocabulary by chunks (step 5).
template <int kVocab>
__device__ unsigned drawChunked(const float *logits, const MkSamplingSettings &s, float largest,
                                const float *laneSums, float u) {
  constexpr unsigned long long kChunk = (kVocab + MK_SAMPLING_LANES - 1) / MK_SAMPLING_LANES;
  auto weight = [&](unsigned long long i) {
    float w = mk_sampling_weight(logits[i], largest, s.temperature);
    return w < s.minP ? 0.0f : w;
  };
  float total = 0.0f;
  for (int lane = 0; lane < MK_SAMPLING_LANES; ++lane)
    total = mk_fadd(total, laneSums[lane]);
  float target = mk_fmul(u, total);
  float before = 0.0f;
  for (int lane = 0; lane < MK_SAMPLING_LANES; ++lane) {
    if (mk_fadd(before, laneSums[lane]) > target) {
      float running = 0.0f;
      unsigned long long end = (lane + 1) * kChunk < kVocab ? (lane + 1) * kChunk : kVocab;
      for (unsigned long long i = lane * kChunk; i < end; ++i) {
        running = mk_fadd(running, weight(i));
        if (mk_fadd(before, running) > target)
          return static_cast<unsigned>(i);
      }
    }
    before = mk_fadd(before, laneSums[lane]);
  }
  for (unsigned long long i = kVocab; i-- > 0;) // rounding left none: the last kept
    if (weight(i) > 0.0f)
      return static_cast<unsigned>(i);
  return 0;
}

// Step 4's candidates: the `count` largest keys, by a radix select a byte
// at a time from the top (an integer histogram: no float order), then
// collected and sorted in decreasing order into shared.keys[0, count).
template <int kVocab, int kThreads>
__device__ void selectCandidates(const float *logits, unsigned count, SamplingShared &shared) {
  unsigned long long prefix = 0;
  int bits = 0; // the top bits of the count-th key found so far
  unsigned remaining = count;
  while (bits < 64) {
    for (int b = threadIdx.x; b < 256; b += kThreads)
      shared.histogram[b] = 0;
    consumerSync<kThreads>();
    for (unsigned i = threadIdx.x; i < kVocab; i += kThreads) {
      unsigned long long key = mk_sampling_key(logits[i], i);
      if (bits == 0 || (key >> (64 - bits)) == prefix)
        atomicAdd(&shared.histogram[(key >> (56 - bits)) & 255], 1u);
    }
    consumerSync<kThreads>();
    if (threadIdx.x == 0) {
      unsigned above = 0;
      int digit = 255;
      while (digit > 0 && above + shared.histogram[digit] < remaining)
        above += shared.histogram[digit--];
      unsigned long long next = (prefix << 8) | static_cast<unsigned>(digit);
      shared.scalars[kScalarPrefixLow] = static_cast<unsigned>(next);
      shared.scalars[kScalarPrefixHigh] = static_cast<unsigned>(next >> 32);
      shared.scalars[kScalarRemaining] = remaining - above;
      // The whole bin is wanted: every key with this prefix, and no more.
      shared.scalars[kScalarShift] = above + shared.histogram[digit] == remaining ? 1u : 0u;
    }
    consumerSync<kThreads>();
    prefix = (static_cast<unsigned long long>(shared.scalars[kScalarPrefixHigh]) << 32) |
             shared.scalars[kScalarPrefixLow];
    remaining = shared.scalars[kScalarRemaining];
    bits += 8;
    bool wholeBin = shared.scalars[kScalarShift] != 0;
    consumerSync<kThreads>();
    if (wholeBin)
      break;
  }

  // Collect every key whose top `bits` bits are at least the prefix: the
  // `count` largest (keys are unique).
  if (threadIdx.x == 0)
    shared.scalars[kScalarCollected] = 0;
  consumerSync<kThreads>();
  for (unsigned i = threadIdx.x; i < kVocab; i += kThreads) {
    unsigned long long key = mk_sampling_key(logits[i], i);
    if ((key >> (64 - bits)) >= prefix) {
      unsigned slot = atomicAdd(&shared.scalars[kScalarCollected], 1u);
      if (slot < count)
        shared.keys[slot] = key;
    }
  }
  consumerSync<kThreads>();

  // Bitonic sort, decreasing, over the next power of two (zeros below
  // every real key pad it).
  unsigned size = 1;
  while (size < count)
    size *= 2;
  for (unsigned j = count + threadIdx.x; j < size; j += kThreads)
    shared.keys[j] = 0;
  consumerSync<kThreads>();
  for (unsigned k = 2; k <= size; k *= 2)
    for (unsigned j = k / 2; j > 0; j /= 2) {
      for (unsigned i = threadIdx.x; i < size; i += kThreads) {
        unsigned partner = i ^ j;
        if (partner > i) {
          unsigned long long a = shared.keys[i], b = shared.keys[partner];
          bool decreasing = (i & k) == 0;
          if (decreasing ? a < b : a > b) {
            shared.keys[i] = b;
            shared.keys[partner] = a;
          }
        }
      }
      consumerSync<kThreads>();
    }
}

// Steps 3 to 5 for a request that samples; every thread calls it in
// uniform control flow and gets the token. `largest`: the largest logit
// (the argmax's value); `position`: the row's context position, the
// generator's counter. Out of line: inlined into the persistent kernel,
// its registers made the task bodies spill.
template <int kVocab, int kThreads>
__device__ __noinline__ unsigned sampleToken(const TaskContext &context, const float *logits,
                                            float largest, long long position) {
  const MkSamplingSettings s = context.control->sampling;
  SamplingShared shared = samplingShared(context.shared);
  float u = mk_sampling_uniform(s.seed, position);

  if (!mk_sampling_has_candidates(&s)) {
    sumLanes<kVocab, kThreads>(logits, s, largest, true, shared.laneSums);
    if (threadIdx.x == 0)
      shared.scalars[kScalarToken] = drawChunked<kVocab>(logits, s, largest, shared.laneSums, u);
    consumerSync<kThreads>();
    return shared.scalars[kScalarToken];
  }

  unsigned count = mk_sampling_candidates(&s, kVocab);
  selectCandidates<kVocab, kThreads>(logits, count, shared);
  for (unsigned j = threadIdx.x; j < count; j += kThreads)
    shared.weights[j] =
        mk_sampling_weight(logits[mk_sampling_key_index(shared.keys[j])], largest, s.temperature);
  bool wholeVocabulary = s.topP < 1.0f && s.topK == 0;
  if (wholeVocabulary) // top-p's total over every token, without min-p
    sumLanes<kVocab, kThreads>(logits, s, largest, false, shared.laneSums);
  else
    consumerSync<kThreads>();

  if (threadIdx.x == 0) {
    float *w = shared.weights;
    if (s.topP < 1.0f) {
      float total = 0.0f;
      if (wholeVocabulary)
        for (int lane = 0; lane < MK_SAMPLING_LANES; ++lane)
          total = mk_fadd(total, shared.laneSums[lane]);
      else
        for (unsigned j = 0; j < count; ++j)
          total = mk_fadd(total, w[j]);
      float wanted = mk_fmul(s.topP, total), running = 0.0f;
      unsigned j = 0;
      while (j < count) {
        running = mk_fadd(running, w[j++]);
        if (running >= wanted)
          break;
      }
      for (; j < count; ++j)
        w[j] = 0.0f;
    }
    float total = 0.0f;
    for (unsigned j = 0; j < count; ++j) {
      if (w[j] < s.minP)
        w[j] = 0.0f;
      total = mk_fadd(total, w[j]);
    }
    float target = mk_fmul(u, total), running = 0.0f;
    unsigned chosen = count; // none yet
    for (unsigned j = 0; j < count && chosen == count; ++j) {
      running = mk_fadd(running, w[j]);
      if (running > target)
        chosen = j;
    }
    for (unsigned j = count; chosen == count && j-- > 0;)
      if (w[j] > 0.0f)
        chosen = j;
    shared.scalars[kScalarToken] =
        chosen < count ? mk_sampling_key_index(shared.keys[chosen]) : 0xffffffffu;
  }
  consumerSync<kThreads>();
  return shared.scalars[kScalarToken];
}

} // namespace mk::gpu

#endif
