// The argmax task's sampling: core/protocol/Sampling.h's steps on the
// device, the same floats in the same order as its CPU reference
// (core/kernels/Sampling.cpp). The parallel parts decide nothing by float
// order: the repetition penalty (each token penalized once, by whichever
// thread marks it first), the weights (one per token), the lanes' sums (each
// lane one thread, from its chunk's first token), the candidates (a radix
// select on unique integer keys, then a sort) and the scans, whose order
// Sampling.h defines as the parallel one (segments scanned by doubling,
// each round from the last round's values). What adds floats in a running
// order, a chunk's tokens in the draw, is one thread's.
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
  float *laneSums;          // [MK_SAMPLING_LANES], then their running sums
  unsigned *histogram;      // [256]
  unsigned *scalars;        // [8]: see the kScalar* names
  float *running;           // [MK_SAMPLING_SCAN_MAX]: a scan's values, then its running sums
  float *scratch;           // [MK_SAMPLING_SCAN_MAX]: the scan's other buffer
  float *lasts;             // [2 * MK_SAMPLING_SEGMENT]: its segments' last values
};

constexpr int kScalarCollected = 0, kScalarToken = 1, kScalarShift = 2, kScalarPrefixLow = 3,
              kScalarPrefixHigh = 4, kScalarRemaining = 5, kScalarFirst = 6, kScalarLast = 7;

__device__ __forceinline__ SamplingShared samplingShared(float *shared) {
  return SamplingShared{reinterpret_cast<unsigned long long *>(shared + MK_SAMPLING_KEYS_OFFSET),
                        shared + MK_SAMPLING_WEIGHTS_OFFSET,
                        shared + MK_SAMPLING_LANE_SUMS_OFFSET,
                        reinterpret_cast<unsigned *>(shared + MK_SAMPLING_HISTOGRAM_OFFSET),
                        reinterpret_cast<unsigned *>(shared + MK_SAMPLING_SCALARS_OFFSET),
                        shared + MK_SAMPLING_RUNNING_OFFSET,
                        shared + MK_SAMPLING_SCRATCH_OFFSET,
                        shared + MK_SAMPLING_TOTALS_OFFSET};
}

// Sampling.h's scan of values[0, n) (n <= MK_SAMPLING_SCAN_MAX), in place:
// every round of the doubling reads one buffer and writes the other, so
// the order is the same for any number of threads. Every thread calls it
// in uniform control flow; a barrier ends it.
template <int kThreads>
__device__ void scanInPlace(float *values, unsigned n, float *scratch, float *lasts) {
  constexpr unsigned kSegment = MK_SAMPLING_SEGMENT;
  unsigned padded = (n + kSegment - 1) / kSegment * kSegment, segments = padded / kSegment;
  for (unsigned i = n + threadIdx.x; i < padded; i += kThreads)
    values[i] = 0.0f;
  consumerSync<kThreads>();
  float *from = values, *to = scratch;
  for (unsigned distance = 1; distance < kSegment; distance *= 2) {
    for (unsigned i = threadIdx.x; i < padded; i += kThreads)
      to[i] = i % kSegment >= distance ? mk_fadd(from[i], from[i - distance]) : from[i];
    consumerSync<kThreads>();
    float *swap = from;
    from = to;
    to = swap;
  }
  float *last = lasts, *other = lasts + kSegment;
  for (unsigned s = threadIdx.x; s < kSegment; s += kThreads)
    last[s] = s < segments ? from[s * kSegment + kSegment - 1] : 0.0f;
  consumerSync<kThreads>();
  for (unsigned distance = 1; distance < kSegment; distance *= 2) {
    for (unsigned s = threadIdx.x; s < kSegment; s += kThreads)
      other[s] = s >= distance ? mk_fadd(last[s], last[s - distance]) : last[s];
    consumerSync<kThreads>();
    float *swap = last;
    last = other;
    other = swap;
  }
  // Five rounds: the segments' scans are in `scratch`, written back here.
  for (unsigned i = threadIdx.x; i < n; i += kThreads)
    values[i] = i < kSegment ? from[i] : mk_fadd(last[i / kSegment - 1], from[i]);
  consumerSync<kThreads>();
}

// The first index in [0, n) whose `holds(i)`, or n: each thread's first
// lowers one shared minimum (integers: no order to keep). Uniform control
// flow; a barrier ends it.
template <int kThreads, class Holds>
__device__ unsigned firstWhere(unsigned n, unsigned *minimum, const Holds &holds) {
  if (threadIdx.x == 0)
    *minimum = n;
  consumerSync<kThreads>();
  for (unsigned i = threadIdx.x; i < n; i += kThreads)
    if (holds(i)) {
      atomicMin(minimum, i);
      break;
    }
  consumerSync<kThreads>();
  unsigned first = *minimum;
  consumerSync<kThreads>();
  return first;
}

// Step 1: the logits to pick from. Without a penalty, the task's input;
// with one, a copy (the control block's penaltyLogits: the input stays as
// lm_head wrote it) in which every distinct token of positions [0,
// position] is penalized once: the mark (this launch's tag for this step)
// says which thread does it. Every thread calls it in uniform control flow.
template <int kVocab, int kThreads>
__device__ const float *penalizeRepetitions(const TaskContext &context, const float *logits) {
  const MkControlBlock *control = context.control;
  if (!mk_sampling_has_penalty(&control->sampling) || !control->contextTokens ||
      !control->penaltyMarks || !control->penaltyLogits)
    return logits;
  float *penalized = reinterpret_cast<float *>(control->penaltyLogits);
  for (unsigned i = threadIdx.x; i < kVocab; i += kThreads)
    penalized[i] = logits[i];
  consumerSync<kThreads>();
  const long long *tokens = reinterpret_cast<const long long *>(control->contextTokens);
  unsigned long long *marks = reinterpret_cast<unsigned long long *>(control->penaltyMarks);
  unsigned long long tag = control->penaltyTag + static_cast<unsigned long long>(context.step) + 1;
  float penalty = control->sampling.repetitionPenalty;
  for (long long j = threadIdx.x; j <= context.position; j += kThreads) {
    long long token = tokens[j];
    if (token >= 0 && token < kVocab && atomicExch(&marks[token], tag) != tag)
      penalized[token] = mk_sampling_penalize(logits[token], penalty);
  }
  consumerSync<kThreads>();
  return penalized;
}

// Each lane's sum of its chunk's weights (min-p applied when asked), by
// the threads that own the lanes, then their running sums (a scan) in
// place: laneSums[MK_SAMPLING_LANES - 1] is the total.
template <int kVocab, int kThreads>
__device__ void sumLanes(const float *logits, const MkSamplingSettings &s, float largest,
                         bool withMinP, SamplingShared &shared) {
  float *laneSums = shared.laneSums;
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
  scanInPlace<kThreads>(laneSums, MK_SAMPLING_LANES, shared.scratch, shared.lasts);
}

// The draw over the whole vocabulary by chunks (step 5), after sumLanes:
// the first chunk whose running sum passes the target is found by all
// threads; within it, the weights are computed by all threads a piece at a
// time and added in order by one. Uniform control flow; every thread gets
// the token.
template <int kVocab, int kThreads>
__device__ unsigned drawChunked(const float *logits, const MkSamplingSettings &s, float largest,
                                SamplingShared &shared, float u) {
  constexpr unsigned long long kChunk = (kVocab + MK_SAMPLING_LANES - 1) / MK_SAMPLING_LANES;
  constexpr unsigned kPiece = MK_SAMPLING_SCAN_MAX;
  const float *running = shared.laneSums;
  float target = mk_fmul(u, running[MK_SAMPLING_LANES - 1]);
  unsigned lane = firstWhere<kThreads>(MK_SAMPLING_LANES, &shared.scalars[kScalarFirst],
                                       [&](unsigned l) { return running[l] > target; });
  if (threadIdx.x == 0)
    shared.scalars[kScalarToken] = 0xffffffffu;
  for (; lane < MK_SAMPLING_LANES; ++lane) {
    float before = lane == 0 ? 0.0f : running[lane - 1], sum = 0.0f;
    unsigned long long end = (lane + 1) * kChunk < kVocab ? (lane + 1) * kChunk : kVocab;
    for (unsigned long long first = lane * kChunk; first < end; first += kPiece) {
      unsigned count = static_cast<unsigned>(end - first < kPiece ? end - first : kPiece);
      for (unsigned k = threadIdx.x; k < count; k += kThreads) {
        float w = mk_sampling_weight(logits[first + k], largest, s.temperature);
        shared.running[k] = w < s.minP ? 0.0f : w;
      }
      consumerSync<kThreads>();
      if (threadIdx.x == 0 && shared.scalars[kScalarToken] == 0xffffffffu)
        for (unsigned k = 0; k < count; ++k) {
          sum = mk_fadd(sum, shared.running[k]);
          if (mk_fadd(before, sum) > target) {
            shared.scalars[kScalarToken] = static_cast<unsigned>(first + k);
            break;
          }
        }
      consumerSync<kThreads>();
      if (shared.scalars[kScalarToken] != 0xffffffffu)
        return shared.scalars[kScalarToken];
    }
  }
  // Rounding left none: the last kept.
  if (threadIdx.x == 0) {
    unsigned token = 0;
    for (unsigned long long i = kVocab; i-- > 0;) {
      float w = mk_sampling_weight(logits[i], largest, s.temperature);
      if (!(w < s.minP) && w > 0.0f) {
        token = static_cast<unsigned>(i);
        break;
      }
    }
    shared.scalars[kScalarToken] = token;
  }
  consumerSync<kThreads>();
  return shared.scalars[kScalarToken];
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
// (the argmax's value). Out of line: inlined into the persistent kernel,
// its registers made the task bodies spill.
template <int kVocab, int kThreads>
__device__ __noinline__ unsigned sampleToken(const TaskContext &context, const float *logits,
                                            float largest) {
  const MkSamplingSettings s = context.control->sampling;
  SamplingShared shared = samplingShared(context.shared);
  float u = mk_sampling_uniform(s.seed, context.position);

  if (!mk_sampling_has_candidates(&s)) {
    sumLanes<kVocab, kThreads>(logits, s, largest, true, shared);
    return drawChunked<kVocab, kThreads>(logits, s, largest, shared, u);
  }

  unsigned count = mk_sampling_candidates(&s, kVocab);
  selectCandidates<kVocab, kThreads>(logits, count, shared);
  float *w = shared.weights;
  for (unsigned j = threadIdx.x; j < count; j += kThreads)
    w[j] = shared.running[j] =
        mk_sampling_weight(logits[mk_sampling_key_index(shared.keys[j])], largest, s.temperature);
  consumerSync<kThreads>();

  if (s.topP < 1.0f) {
    float total;
    scanInPlace<kThreads>(shared.running, count, shared.scratch, shared.lasts);
    if (s.topK == 0) { // top-p's total over every token, without min-p
      sumLanes<kVocab, kThreads>(logits, s, largest, false, shared);
      total = shared.laneSums[MK_SAMPLING_LANES - 1];
    } else {
      total = shared.running[count - 1];
    }
    float wanted = mk_fmul(s.topP, total);
    const float *running = shared.running;
    unsigned cut = firstWhere<kThreads>(count, &shared.scalars[kScalarFirst],
                                        [&](unsigned j) { return running[j] >= wanted; });
    for (unsigned j = cut + 1 + threadIdx.x; j < count; j += kThreads)
      w[j] = 0.0f;
  }
  for (unsigned j = threadIdx.x; j < count; j += kThreads) {
    if (w[j] < s.minP)
      w[j] = 0.0f;
    shared.running[j] = w[j];
  }
  consumerSync<kThreads>();

  scanInPlace<kThreads>(shared.running, count, shared.scratch, shared.lasts);
  float target = mk_fmul(u, shared.running[count - 1]);
  const float *running = shared.running;
  unsigned chosen = firstWhere<kThreads>(count, &shared.scalars[kScalarFirst],
                                         [&](unsigned j) { return running[j] > target; });
  if (chosen == count && threadIdx.x == 0) // rounding left none: the last kept
    for (unsigned j = count; j-- > 0;)
      if (w[j] > 0.0f) {
        chosen = j;
        break;
      }
  if (threadIdx.x == 0)
    shared.scalars[kScalarToken] =
        chosen < count ? mk_sampling_key_index(shared.keys[chosen]) : 0xffffffffu;
  consumerSync<kThreads>();
  return shared.scalars[kScalarToken];
}

} // namespace mk::gpu

#endif
