/* How the token-picking task (the Argmax kind) picks a token: the one
 * definition that the CPU reference (core/kernels/Sampling.cpp) and the
 * device function (codegen/device/SamplingTask.cuh) both follow, compiled by
 * g++ and NVRTC. The same settings, seed and logits give the same token on
 * both: every float operation that decides a token is an IEEE-rounded add,
 * multiply or divide (written as mk_fadd / mk_fmul / mk_fdiv, which the
 * device compiles to __fadd_rn etc., so nothing is contracted into an fma),
 * done in the order written here; the exponential is this header's own, not
 * the libraries' (whose last bits differ between the host and the device).
 *
 * One step, given the logits l[0, V) and the tokens of the context so far
 * (positions 0 through the step's position):
 *
 *  1. Repetition penalty (HF's): each distinct token t of the context has
 *     l[t] replaced by l[t] / penalty when l[t] > 0, else l[t] * penalty.
 *     Skipped when penalty == 1.
 *  2. Greedy (temperature == 0, or top_k == 1): the lowest index of the
 *     largest logit, as the argmax always did. The rest is skipped.
 *  3. Weights: m = the largest logit; w[i] = mk_exp((l[i] - m) / T), so the
 *     most likely token weighs 1.
 *  4. Candidates, when top_k > 0 or top_p < 1: the C = top_k (or, with
 *     top_k == 0, MK_SAMPLING_MAX_CANDIDATES) most likely tokens, ordered by
 *     logit, larger first, ties by lower index. top-p keeps the fewest first
 *     candidates whose weights add up to at least top_p times the total:
 *     the candidates' total with top_k > 0 (HF applies top-p after top-k),
 *     the whole vocabulary's with top_k == 0. So top-p looks at most at the
 *     MK_SAMPLING_MAX_CANDIDATES most likely tokens, and top_k is at most
 *     that; HF keeps every token tied with the k-th, this keeps k. Then
 *     min-p keeps only w[i] >= min_p (HF: p[i] >= min_p * p_max), among the
 *     candidates, or over the whole vocabulary without candidates.
 *  5. The draw: u = mk_sampling_uniform(seed, position) in [0, 1); the
 *     kept weights are summed in their order (candidates: their order;
 *     otherwise the vocabulary in MK_SAMPLING_LANES contiguous chunks, each
 *     chunk summed from its first token, the chunks' sums then added in
 *     order); target = u * total; the token is the first whose running sum
 *     (chunks: the sum of the chunks before it plus its own chunk's running
 *     sum) exceeds target, or the last kept one when rounding leaves none.
 *
 * The counter of the generator is the step's context position, so a seed
 * gives the same tokens whether a context is generated in one call or fed
 * turn by turn, streamed or not. */
#ifndef MKC_CORE_PROTOCOL_SAMPLING_H
#define MKC_CORE_PROTOCOL_SAMPLING_H

#include "core/protocol/Portable.h"

/* The most candidates top-k and top-p consider. */
#define MK_SAMPLING_MAX_CANDIDATES 1024
/* The contiguous chunks of the vocabulary summed apart (step 5). */
#define MK_SAMPLING_LANES 512

/* A request's settings, in the control block (runtime/format/ControlBlock.h).
 * Greedy: temperature 0, top_k 0, top_p 1, min_p 0, penalty 1 (all zeros
 * but top_p and penalty read as greedy too: see mk_sampling_is_greedy). */
typedef struct MkSamplingSettings {
  float temperature;       /* 0: greedy */
  float topP;              /* (0, 1]; 1: off */
  float minP;              /* [0, 1]; 0: off */
  float repetitionPenalty; /* > 0; 1: off */
  mk_u32 topK;             /* [0, MK_SAMPLING_MAX_CANDIDATES]; 0: off */
  mk_u32 reserved;
  mk_u64 seed;
} MkSamplingSettings;

#ifdef __CUDACC_RTC__
#define mk_fadd(a, b) __fadd_rn((a), (b))
#define mk_fmul(a, b) __fmul_rn((a), (b))
#define mk_fdiv(a, b) __fdiv_rn((a), (b))
#define MK_SAMPLING_FN __device__ __forceinline__
#else
/* x86-64 without -mfma has no fused multiply-add for g++ to contract into;
 * the volatile-free plain operators are then exactly rounded. */
#define mk_fadd(a, b) ((float)(a) + (float)(b))
#define mk_fmul(a, b) ((float)(a) * (float)(b))
#define mk_fdiv(a, b) ((float)(a) / (float)(b))
#define MK_SAMPLING_FN static inline
#endif

MK_SAMPLING_FN int mk_sampling_is_greedy(const MkSamplingSettings *s) {
  return !(s->temperature > 0.0f) || s->topK == 1u;
}

/* A zeroed block (a penalty of 0) means no penalty, as 1 does. */
MK_SAMPLING_FN int mk_sampling_has_penalty(const MkSamplingSettings *s) {
  return s->repetitionPenalty > 0.0f && s->repetitionPenalty != 1.0f;
}

MK_SAMPLING_FN MkSamplingSettings mk_sampling_greedy(void) {
  MkSamplingSettings s = {0.0f, 1.0f, 0.0f, 1.0f, 0u, 0u, 0ull};
  return s;
}

/* Settings from their values, in the order a request usually states them. */
MK_SAMPLING_FN MkSamplingSettings mk_sampling_settings(float temperature, mk_u32 topK, float topP,
                                                       float minP, float repetitionPenalty,
                                                       mk_u64 seed) {
  MkSamplingSettings s = mk_sampling_greedy();
  s.temperature = temperature;
  s.topK = topK;
  s.topP = topP;
  s.minP = minP;
  s.repetitionPenalty = repetitionPenalty;
  s.seed = seed;
  return s;
}

MK_SAMPLING_FN int mk_sampling_has_candidates(const MkSamplingSettings *s) {
  return s->topK > 0u || s->topP < 1.0f;
}

MK_SAMPLING_FN mk_u32 mk_sampling_candidates(const MkSamplingSettings *s, mk_u64 vocab) {
  mk_u64 wanted = s->topK > 0u ? s->topK : MK_SAMPLING_MAX_CANDIDATES;
  return (mk_u32)(wanted < vocab ? wanted : vocab);
}

/* Step 1, one logit of a token in the context. */
MK_SAMPLING_FN float mk_sampling_penalize(float logit, float penalty) {
  return logit > 0.0f ? mk_fdiv(logit, penalty) : mk_fmul(logit, penalty);
}

MK_SAMPLING_FN mk_u64 mk_splitmix64(mk_u64 x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The step's uniform number in [0, 1): 24 random bits, exact in a float. */
MK_SAMPLING_FN float mk_sampling_uniform(mk_u64 seed, mk_i64 position) {
  mk_u64 bits = mk_splitmix64(mk_splitmix64(seed) + (mk_u64)position);
  return (float)(mk_u32)(bits >> 40) * (1.0f / 16777216.0f);
}

MK_SAMPLING_FN float mk_float_from_bits(mk_u32 bits) {
#ifdef __CUDACC_RTC__
  return __uint_as_float(bits);
#else
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

MK_SAMPLING_FN mk_u32 mk_bits_from_float(float value) {
#ifdef __CUDACC_RTC__
  return __float_as_uint(value);
#else
  mk_u32 bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

/* e^x for x <= 0, from adds and multiplies alone: x = k ln2 + r with
 * |r| <= ln2/2 (ln2 in two parts, Cody and Waite), e^r by its Taylor
 * polynomial to degree 7 (relative error below 2e-7 there), times 2^k built
 * in the exponent bits. 0 below -87 (2^k would be subnormal). */
MK_SAMPLING_FN float mk_exp(float x) {
  if (!(x > -87.0f))
    return 0.0f;
  float k = mk_fmul(x, 1.44269504088896341f);
  k = (float)(int)(k < 0.0f ? mk_fadd(k, -0.5f) : mk_fadd(k, 0.5f)); /* rounded, half away */
  float r = mk_fadd(x, -mk_fmul(k, 0.693145751953125f));               /* ln2 high: exact product */
  r = mk_fadd(r, -mk_fmul(k, 1.428606765330187e-06f));                /* ln2 low */
  float p = 1.0f / 5040.0f;
  p = mk_fadd(mk_fmul(p, r), 1.0f / 720.0f);
  p = mk_fadd(mk_fmul(p, r), 1.0f / 120.0f);
  p = mk_fadd(mk_fmul(p, r), 1.0f / 24.0f);
  p = mk_fadd(mk_fmul(p, r), 1.0f / 6.0f);
  p = mk_fadd(mk_fmul(p, r), 0.5f);
  p = mk_fadd(mk_fmul(p, r), 1.0f);
  p = mk_fadd(mk_fmul(p, r), 1.0f);
  mk_i32 exponent = (mk_i32)k + 127;
  return mk_fmul(p, mk_float_from_bits((mk_u32)exponent << 23));
}

/* Step 3: a token's weight, its logit (penalized) against the largest. */
MK_SAMPLING_FN float mk_sampling_weight(float logit, float largest, float temperature) {
  return mk_exp(mk_fdiv(mk_fadd(logit, -largest), temperature));
}

/* Step 4's order as one integer, larger first: the logit's bits made
 * monotone (negative values flipped), then the index inverted, so that
 * sorting the keys in decreasing order sorts by logit, ties by lower index.
 * Unique per token. */
MK_SAMPLING_FN mk_u32 mk_sampling_value_key(float logit) {
  mk_u32 bits = mk_bits_from_float(logit);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

MK_SAMPLING_FN mk_u64 mk_sampling_key(float logit, mk_u32 index) {
  return ((mk_u64)mk_sampling_value_key(logit) << 32) | (mk_u64)(0xffffffffu - index);
}

MK_SAMPLING_FN mk_u32 mk_sampling_key_index(mk_u64 key) {
  return 0xffffffffu - (mk_u32)(key & 0xffffffffu);
}

/* Step 5's chunks: lane `lane` sums tokens [first, end). */
MK_SAMPLING_FN mk_u64 mk_sampling_chunk(mk_u64 vocab) {
  return (vocab + MK_SAMPLING_LANES - 1) / MK_SAMPLING_LANES;
}

#endif
