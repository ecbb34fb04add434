#include "core/kernels/Kernels.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace mk::kernels {

KVCache::KVCache(int64_t capacity, int64_t numKvHeads, int64_t headDim)
    : positions(capacity), kvHeads(numKvHeads), dim(headDim),
      keys(capacity * numKvHeads * headDim), values(capacity * numKvHeads * headDim) {}

void KVCache::store(int64_t pos, std::span<const float> key, std::span<const float> value) {
  assert(pos >= 0 && pos < positions);
  assert(key.size() == static_cast<size_t>(kvHeads * dim) && value.size() == key.size());
  std::copy(key.begin(), key.end(), keys.begin() + offset(pos, 0));
  std::copy(value.begin(), value.end(), values.begin() + offset(pos, 0));
}

std::span<const float> KVCache::key(int64_t pos, int64_t kvHead) const {
  return std::span<const float>(keys).subspan(offset(pos, kvHead), dim);
}

std::span<const float> KVCache::value(int64_t pos, int64_t kvHead) const {
  return std::span<const float>(values).subspan(offset(pos, kvHead), dim);
}

double dot(std::span<const float> a, std::span<const float> b) {
  assert(a.size() == b.size());
  // Independent partial sums: without them every add waits for the previous
  // one, and the compiler may not reorder floating-point sums to vectorize.
  constexpr size_t lanes = 8;
  double partial[lanes] = {};
  size_t n = a.size(), i = 0;
  for (; i + lanes <= n; i += lanes)
    for (size_t lane = 0; lane < lanes; ++lane)
      partial[lane] += double(a[i + lane]) * double(b[i + lane]);
  double sum = 0;
  for (; i < n; ++i)
    sum += double(a[i]) * double(b[i]);
  for (double p : partial)
    sum += p;
  return sum;
}

void rmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> y) {
  assert(x.size() == weight.size() && y.size() == x.size());
  // The order of float operations follows HF's RMSNorm: the variance as f32,
  // then x * rsqrt(variance + eps), then times the weight.
  float variance = static_cast<float>(dot(x, x) / static_cast<double>(x.size()));
  float invRms = 1.0f / std::sqrt(variance + eps);
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = (x[i] * invRms) * weight[i];
}

void headRmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
                 int64_t headDim, std::span<float> y) {
  assert(x.size() % headDim == 0 && y.size() == x.size());
  for (size_t start = 0; start < x.size(); start += headDim)
    rmsNorm(x.subspan(start, headDim), weight, eps, y.subspan(start, headDim));
}

void linear(std::span<const float> x, std::span<const float> weight,
            std::span<const float> bias, std::span<float> y) {
  size_t in = x.size();
  assert(weight.size() == y.size() * in && (bias.empty() || bias.size() == y.size()));
  for (size_t row = 0; row < y.size(); ++row) {
    float sum = static_cast<float>(dot(weight.subspan(row * in, in), x));
    y[row] = bias.empty() ? sum : sum + bias[row];
  }
}

void rotary(std::span<const float> x, const RotaryConfig &config, int64_t pos,
            std::span<float> y) {
  int64_t half = config.rotaryDim / 2;
  assert(x.size() % config.headDim == 0 && y.size() == x.size());
  assert(static_cast<int64_t>(config.invFreq.size()) == half);
  std::copy(x.begin(), x.end(), y.begin());
  // PyTorch and onnxruntime compute the angle as an f32 product and take its
  // cos and sin in f32; doing the same keeps large positions in agreement.
  std::vector<float> cosines(half), sines(half);
  for (int64_t i = 0; i < half; ++i) {
    float angle = static_cast<float>(pos) * config.invFreq[i];
    cosines[i] = std::cos(angle);
    sines[i] = std::sin(angle);
  }
  for (size_t head = 0; head < x.size(); head += config.headDim) {
    for (int64_t i = 0; i < half; ++i) {
      size_t first = head + (config.interleaved ? 2 * i : i);
      size_t second = head + (config.interleaved ? 2 * i + 1 : i + half);
      y[first] = x[first] * cosines[i] - x[second] * sines[i];
      y[second] = x[second] * cosines[i] + x[first] * sines[i];
    }
  }
}

void attention(std::span<const float> q, std::span<const float> k, std::span<const float> v,
               KVCache &cache, int64_t pos, int64_t numHeads, float scale, std::span<float> y,
               int64_t window) {
  int64_t headDim = cache.headDim();
  int64_t headsPerKvHead = numHeads / cache.numKvHeads();
  assert(q.size() == static_cast<size_t>(numHeads * headDim) && y.size() == q.size());
  cache.store(pos, k, v);

  int64_t first = window > 0 ? std::max<int64_t>(0, pos + 1 - window) : 0;
  std::vector<float> weights(pos + 1);
  std::vector<double> weightedSum(headDim);
  for (int64_t head = 0; head < numHeads; ++head) {
    int64_t kvHead = head / headsPerKvHead;
    std::span<const float> query = q.subspan(head * headDim, headDim);

    float maxScore = -std::numeric_limits<float>::infinity();
    for (int64_t t = first; t <= pos; ++t) {
      weights[t] = static_cast<float>(dot(query, cache.key(t, kvHead))) * scale;
      maxScore = std::max(maxScore, weights[t]);
    }
    // Subtracting the largest score keeps exp from overflowing.
    double total = 0;
    for (int64_t t = first; t <= pos; ++t) {
      weights[t] = std::exp(weights[t] - maxScore);
      total += weights[t];
    }

    std::fill(weightedSum.begin(), weightedSum.end(), 0.0);
    for (int64_t t = first; t <= pos; ++t) {
      std::span<const float> value = cache.value(t, kvHead);
      for (int64_t d = 0; d < headDim; ++d)
        weightedSum[d] += double(weights[t]) * double(value[d]);
    }
    for (int64_t d = 0; d < headDim; ++d)
      y[head * headDim + d] = static_cast<float>(weightedSum[d] / total);
  }
}

void siluMul(std::span<const float> gate, std::span<const float> up, std::span<float> y) {
  assert(gate.size() == up.size() && y.size() == gate.size());
  for (size_t i = 0; i < gate.size(); ++i)
    y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void geluTanhMul(std::span<const float> gate, std::span<const float> up, std::span<float> y) {
  assert(gate.size() == up.size() && y.size() == gate.size());
  const float inner = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (size_t i = 0; i < gate.size(); ++i) {
    float x = gate[i];
    y[i] = 0.5f * x * (1.0f + std::tanh(inner * (x + 0.044715f * x * x * x))) * up[i];
  }
}

void add(std::span<const float> lhs, std::span<const float> rhs, std::span<float> y) {
  assert(lhs.size() == rhs.size() && y.size() == lhs.size());
  for (size_t i = 0; i < lhs.size(); ++i)
    y[i] = lhs[i] + rhs[i];
}

int64_t argmax(std::span<const float> x) {
  int64_t best = 0;
  // Strictly greater: a later equal value never replaces an earlier one.
  for (size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[best])
      best = static_cast<int64_t>(i);
  return best;
}

void gemv(std::span<const float> x, const GemvConfig &config, std::span<const float> residual,
          std::span<float> y) {
  assert(config.biases.empty() || config.biases.size() == config.weights.size());
  std::vector<float> normed;
  std::span<const float> input = x;
  if (!config.norm.empty()) {
    normed.resize(x.size());
    rmsNorm(x, config.norm, config.eps, normed);
    input = normed;
  }
  size_t totalRows = 0;
  for (std::span<const float> weight : config.weights)
    totalRows += weight.size() / x.size();
  std::vector<float> stacked(totalRows);
  size_t row = 0;
  for (size_t i = 0; i < config.weights.size(); ++i) {
    size_t rows = config.weights[i].size() / x.size();
    std::span<const float> bias;
    if (!config.biases.empty())
      bias = config.biases[i];
    linear(input, config.weights[i], bias, std::span<float>(stacked).subspan(row, rows));
    row += rows;
  }
  switch (config.epilogue) {
  case Epilogue::None:
    assert(y.size() == stacked.size());
    std::copy(stacked.begin(), stacked.end(), y.begin());
    break;
  case Epilogue::SiluMul: {
    std::span<const float> gateAndUp(stacked);
    size_t half = stacked.size() / 2;
    siluMul(gateAndUp.first(half), gateAndUp.subspan(half), y);
    break;
  }
  case Epilogue::GeluTanhMul: {
    std::span<const float> gateAndUp(stacked);
    size_t half = stacked.size() / 2;
    geluTanhMul(gateAndUp.first(half), gateAndUp.subspan(half), y);
    break;
  }
  case Epilogue::Residual:
    add(residual, stacked, y);
    break;
  }
}

void fusedAttention(std::span<const float> qkv, const AttentionInputConfig &config,
                    KVCache &cache, int64_t pos, float scale, std::span<float> y,
                    int64_t window) {
  size_t qLength = config.numHeads * cache.headDim();
  size_t kvLength = cache.numKvHeads() * cache.headDim();
  assert(qkv.size() == qLength + 2 * kvLength);
  std::vector<float> q(qkv.begin(), qkv.begin() + qLength);
  std::vector<float> k(qkv.begin() + qLength, qkv.begin() + qLength + kvLength);
  std::span<const float> v = qkv.subspan(qLength + kvLength);
  // rotary() reads x after writing y, so no stage may write into its input.
  auto normalize = [&](std::vector<float> &x, std::span<const float> weight) {
    if (weight.empty())
      return;
    std::vector<float> out(x.size());
    headRmsNorm(x, weight, config.normEps, cache.headDim(), out);
    x = std::move(out);
  };
  auto rotate = [&](std::vector<float> &x) {
    if (config.rotary.rotaryDim == 0)
      return;
    std::vector<float> out(x.size());
    rotary(x, config.rotary, pos, out);
    x = std::move(out);
  };
  normalize(q, config.qNorm);
  normalize(k, config.kNorm);
  rotate(q);
  rotate(k);
  attention(q, k, v, cache, pos, config.numHeads, scale, y, window);
}

} // namespace mk::kernels
