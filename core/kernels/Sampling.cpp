// The token-picking rules of core/protocol/Sampling.h, written as plainly as
// they read there: the floats that decide a token are computed in the
// order the header gives, with its functions, so that the device agrees.
#include "core/kernels/Sampling.h"

#include "core/kernels/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>
#include <vector>

namespace mk::kernels {

namespace {

std::string number(float value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
  return text;
}

// The weights of step 3, before min-p.
std::vector<float> weights(std::span<const float> logits, const MkSamplingSettings &settings,
                           float largest) {
  std::vector<float> w(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    w[i] = mk_sampling_weight(logits[i], largest, settings.temperature);
  return w;
}

// min-p, applied after top-p as in HF (a weight is relative to the largest,
// which every filter keeps, so the order changes nothing but the sums).
float minP(float weight, const MkSamplingSettings &settings) {
  return weight < settings.minP ? 0.0f : weight;
}

// Step 5 over the whole vocabulary in MK_SAMPLING_LANES chunks.
struct Chunked {
  std::vector<float> sums; // per lane
  float total = 0.0f;
};

Chunked sumChunks(std::span<const float> w) {
  Chunked chunked;
  uint64_t chunk = mk_sampling_chunk(w.size());
  chunked.sums.assign(MK_SAMPLING_LANES, 0.0f);
  for (uint64_t lane = 0; lane < MK_SAMPLING_LANES; ++lane) {
    float sum = 0.0f;
    for (uint64_t i = lane * chunk; i < std::min<uint64_t>((lane + 1) * chunk, w.size()); ++i)
      sum = mk_fadd(sum, w[i]);
    chunked.sums[lane] = sum;
  }
  for (float sum : chunked.sums)
    chunked.total = mk_fadd(chunked.total, sum);
  return chunked;
}

int64_t drawChunked(std::span<const float> w, const Chunked &chunked, float target) {
  uint64_t chunk = mk_sampling_chunk(w.size());
  float before = 0.0f;
  for (uint64_t lane = 0; lane < MK_SAMPLING_LANES; ++lane) {
    if (mk_fadd(before, chunked.sums[lane]) > target) {
      float running = 0.0f;
      for (uint64_t i = lane * chunk; i < std::min<uint64_t>((lane + 1) * chunk, w.size()); ++i) {
        running = mk_fadd(running, w[i]);
        if (mk_fadd(before, running) > target)
          return static_cast<int64_t>(i);
      }
    }
    before = mk_fadd(before, chunked.sums[lane]);
  }
  for (size_t i = w.size(); i-- > 0;) // rounding left none: the last kept
    if (w[i] > 0.0f)
      return static_cast<int64_t>(i);
  return 0;
}

} // namespace

std::string checkSamplingSettings(const MkSamplingSettings &s) {
  if (!(s.temperature >= 0.0f) || std::isinf(s.temperature))
    return "temperature " + number(s.temperature) + " is not a finite number >= 0";
  if (!(s.topP > 0.0f && s.topP <= 1.0f))
    return "top_p " + number(s.topP) + " is outside (0, 1]";
  if (!(s.minP >= 0.0f && s.minP <= 1.0f))
    return "min_p " + number(s.minP) + " is outside [0, 1]";
  if (!(s.repetitionPenalty > 0.0f) || std::isinf(s.repetitionPenalty))
    return "repetition_penalty " + number(s.repetitionPenalty) + " is not a finite number > 0";
  if (s.topK > MK_SAMPLING_MAX_CANDIDATES)
    return "top_k " + std::to_string(s.topK) + " is more than the " +
           std::to_string(MK_SAMPLING_MAX_CANDIDATES) + " candidates the sampler considers";
  return "";
}

void applyRepetitionPenalty(std::span<float> logits, std::span<const int64_t> context,
                            float penalty) {
  if (!(penalty > 0.0f) || penalty == 1.0f)
    return;
  std::unordered_set<int64_t> seen;
  for (int64_t token : context)
    if (token >= 0 && static_cast<uint64_t>(token) < logits.size() && seen.insert(token).second)
      logits[token] = mk_sampling_penalize(logits[token], penalty);
}

namespace {

// Steps 3 and 4: the tokens a draw walks, in its order, with their weights
// after the filters (0: removed). Without candidates: the whole vocabulary,
// in index order, walked by chunks.
struct Kept {
  bool chunked = true;
  std::vector<uint32_t> order; // candidates only
  std::vector<float> weights;  // by place in `order`, or by token when chunked
};

Kept keep(std::span<const float> logits, const MkSamplingSettings &settings, float largest) {
  Kept kept;
  std::vector<float> w = weights(logits, settings, largest);
  if (!mk_sampling_has_candidates(&settings)) {
    for (float &weight : w)
      weight = minP(weight, settings);
    kept.weights = std::move(w);
    return kept;
  }
  kept.chunked = false;
  uint32_t count = mk_sampling_candidates(&settings, logits.size());
  std::vector<uint64_t> keys(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    keys[i] = mk_sampling_key(logits[i], static_cast<uint32_t>(i));
  std::partial_sort(keys.begin(), keys.begin() + count, keys.end(), std::greater<uint64_t>());
  kept.order.resize(count);
  kept.weights.resize(count);
  for (uint32_t j = 0; j < count; ++j) {
    kept.order[j] = mk_sampling_key_index(keys[j]);
    kept.weights[j] = w[kept.order[j]];
  }
  if (settings.topP < 1.0f) {
    float total = 0.0f;
    if (settings.topK > 0)
      for (float weight : kept.weights)
        total = mk_fadd(total, weight);
    else
      total = sumChunks(w).total;
    float wanted = mk_fmul(settings.topP, total);
    float running = 0.0f;
    uint32_t j = 0;
    while (j < count) {
      running = mk_fadd(running, kept.weights[j++]);
      if (running >= wanted)
        break;
    }
    std::fill(kept.weights.begin() + j, kept.weights.end(), 0.0f);
  }
  for (float &weight : kept.weights)
    weight = minP(weight, settings);
  return kept;
}

} // namespace

std::vector<float> keptWeights(std::span<const float> logits, const MkSamplingSettings &settings) {
  std::vector<float> byToken(logits.size(), 0.0f);
  if (logits.empty())
    return byToken;
  int64_t best = argmax(logits);
  if (mk_sampling_is_greedy(&settings)) {
    byToken[best] = 1.0f;
    return byToken;
  }
  Kept kept = keep(logits, settings, logits[best]);
  if (kept.chunked)
    return kept.weights;
  for (size_t j = 0; j < kept.order.size(); ++j)
    byToken[kept.order[j]] = kept.weights[j];
  return byToken;
}

int64_t sampleToken(std::span<const float> logits, const MkSamplingSettings &settings,
                    int64_t position) {
  int64_t best = argmax(logits);
  if (mk_sampling_is_greedy(&settings) || logits.size() <= 1)
    return best;
  Kept kept = keep(logits, settings, logits[best]);
  float u = mk_sampling_uniform(settings.seed, position);
  if (kept.chunked) {
    Chunked chunked = sumChunks(kept.weights);
    return drawChunked(kept.weights, chunked, mk_fmul(u, chunked.total));
  }
  float total = 0.0f;
  for (float weight : kept.weights)
    total = mk_fadd(total, weight);
  float target = mk_fmul(u, total);
  float running = 0.0f;
  for (size_t j = 0; j < kept.order.size(); ++j) {
    running = mk_fadd(running, kept.weights[j]);
    if (running > target)
      return kept.order[j];
  }
  for (size_t j = kept.order.size(); j-- > 0;)
    if (kept.weights[j] > 0.0f)
      return kept.order[j];
  return best;
}

} // namespace mk::kernels
