// The token-picking rules of core/protocol/Sampling.h: each filter of the
// CPU reference against a plain reimplementation here (doubles, a full
// sort), the generator's determinism, the draw's distribution, and the
// executor sampling, stopping at EOS and at the host's word in one launch.
#include "ToyTaskGraph.h"

#include "core/kernels/Kernels.h"
#include "core/kernels/Sampling.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace mk {
namespace {

using kernels::keptWeights;
using kernels::sampleToken;

// No repetition penalty: the tests of it set it themselves.
MkSamplingSettings settings(float temperature, uint32_t topK = 0, float topP = 1.0f,
                            float minP = 0.0f, uint64_t seed = 1) {
  return mk_sampling_settings(temperature, topK, topP, minP, 1.0f, seed);
}

std::vector<float> randomLogits(size_t vocab, uint64_t seed, float scale = 3.0f) {
  std::mt19937_64 random(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> logits(vocab);
  for (float &logit : logits)
    logit = normal(random);
  return logits;
}

// The filters as they read: sort, cut, in doubles. `borderline`: a cut fell
// within rounding of its threshold, where float and double may disagree.
std::set<int64_t> referenceKept(const std::vector<float> &logits, const MkSamplingSettings &s,
                                bool &borderline) {
  borderline = false;
  size_t vocab = logits.size();
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  double largest = logits[order[0]];
  auto weight = [&](int64_t i) { return std::exp((logits[i] - largest) / s.temperature); };
  double all = 0;
  for (int64_t i : order)
    all += weight(i);
  size_t count = vocab;
  if (s.topK > 0 || s.topP < 1.0f)
    count = std::min<size_t>(s.topK > 0 ? s.topK : MK_SAMPLING_MAX_CANDIDATES, vocab);
  if (s.topP < 1.0f) {
    double total = 0;
    for (size_t j = 0; j < count; ++j)
      total += s.topK > 0 ? weight(order[j]) : 0;
    if (s.topK == 0)
      total = all;
    double wanted = s.topP * total, running = 0;
    size_t j = 0;
    while (j < count) {
      running += weight(order[j++]);
      if (std::fabs(running - wanted) < 1e-5 * total)
        borderline = true;
      if (running >= wanted)
        break;
    }
    count = j;
  }
  std::set<int64_t> kept;
  for (size_t j = 0; j < count; ++j) {
    double w = weight(order[j]);
    if (std::fabs(w - s.minP) < 1e-5)
      borderline = true;
    if (w >= s.minP)
      kept.insert(order[j]);
  }
  return kept;
}

TEST(Sampling, ExpMatchesTheLibraryToAFewUlps) {
  for (float x = -86.99f; x <= 0.0f; x += 0.0137f) {
    double expected = std::exp(static_cast<double>(x));
    EXPECT_LE(std::fabs(mk_exp(x) - expected), 4e-7 * expected) << x;
  }
  EXPECT_EQ(mk_exp(0.0f), 1.0f);
  EXPECT_EQ(mk_exp(-100.0f), 0.0f);
  EXPECT_EQ(mk_exp(-INFINITY), 0.0f);
}

TEST(Sampling, TheGeneratorIsAFunctionOfSeedAndPosition) {
  EXPECT_EQ(mk_sampling_uniform(7, 3), mk_sampling_uniform(7, 3));
  EXPECT_NE(mk_sampling_uniform(7, 3), mk_sampling_uniform(7, 4));
  EXPECT_NE(mk_sampling_uniform(7, 3), mk_sampling_uniform(8, 3));
  // SplitMix64's published first output for state 0.
  EXPECT_EQ(mk_splitmix64(0), 0xe220a8397b1dcdafull);
  double mean = 0;
  for (int i = 0; i < 10000; ++i) {
    float u = mk_sampling_uniform(42, i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    mean += u / 10000;
  }
  EXPECT_NEAR(mean, 0.5, 0.01);
}

TEST(Sampling, GreedyIsTheArgmaxAndSoAreTopKOneAndATinyTemperature) {
  for (uint64_t trial = 0; trial < 20; ++trial) {
    std::vector<float> logits = randomLogits(500, trial);
    int64_t best = kernels::argmax(logits);
    for (uint64_t seed = 0; seed < 10; ++seed) {
      EXPECT_EQ(sampleToken(logits, mk_sampling_greedy(), seed), best);
      EXPECT_EQ(sampleToken(logits, settings(0.0f, 0, 0.5f, 0.3f, seed), seed), best);
      EXPECT_EQ(sampleToken(logits, settings(1.5f, 1, 1.0f, 0.0f, seed), seed), best);
      EXPECT_EQ(sampleToken(logits, settings(1e-4f, 0, 1.0f, 0.0f, seed), seed), best);
    }
  }
  // Ties: the lowest index, as the argmax always was.
  std::vector<float> tied = {1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(sampleToken(tied, mk_sampling_greedy(), 0), 1);
}

TEST(Sampling, EachFilterKeepsWhatAPlainSortAndCutKeeps) {
  struct Case {
    float temperature;
    uint32_t topK;
    float topP, minP;
  };
  std::vector<Case> cases = {{1.0f, 0, 1.0f, 0.0f},   {0.7f, 5, 1.0f, 0.0f},
                             {1.3f, 50, 1.0f, 0.0f},  {1.0f, 0, 0.9f, 0.0f},
                             {0.8f, 0, 0.5f, 0.0f},   {1.0f, 20, 0.8f, 0.0f},
                             {1.0f, 0, 1.0f, 0.05f},  {2.0f, 0, 1.0f, 0.2f},
                             {1.0f, 40, 0.95f, 0.1f}, {3.0f, 0, 0.99f, 0.0f},
                             {1.0f, 1024, 1.0f, 0.0f}};
  int compared = 0;
  for (const Case &c : cases)
    for (uint64_t trial = 0; trial < 12; ++trial)
      for (size_t vocab : {size_t(37), size_t(700), size_t(3000)}) {
        std::vector<float> logits = randomLogits(vocab, 100 + trial, trial % 2 ? 1.0f : 4.0f);
        MkSamplingSettings s = settings(c.temperature, c.topK, c.topP, c.minP);
        bool borderline = false;
        std::set<int64_t> expected = referenceKept(logits, s, borderline);
        if (borderline)
          continue;
        std::vector<float> weights = keptWeights(logits, s);
        std::set<int64_t> kept;
        for (size_t i = 0; i < weights.size(); ++i)
          if (weights[i] > 0.0f)
            kept.insert(static_cast<int64_t>(i));
        EXPECT_EQ(kept, expected) << "temperature " << c.temperature << ", top_k " << c.topK
                                  << ", top_p " << c.topP << ", min_p " << c.minP << ", vocab "
                                  << vocab << ", trial " << trial;
        // Every draw lands in the kept set.
        for (int64_t position = 0; position < 50; ++position)
          EXPECT_TRUE(expected.count(sampleToken(logits, s, position)));
        ++compared;
      }
  EXPECT_GT(compared, 300);
}

TEST(Sampling, FrequenciesOverManySeedsFollowTheSoftmax) {
  std::vector<float> logits = {1.0f, 2.5f, 0.2f, -1.0f, 2.0f, 0.0f, 1.7f, -0.5f};
  for (MkSamplingSettings s : {settings(0.8f), settings(1.0f, 3), settings(1.2f, 0, 0.7f),
                               settings(1.0f, 0, 1.0f, 0.2f)}) {
    bool borderline = false;
    std::set<int64_t> kept = referenceKept(logits, s, borderline);
    ASSERT_FALSE(borderline);
    double largest = *std::max_element(logits.begin(), logits.end()), total = 0;
    std::vector<double> p(logits.size(), 0.0);
    for (int64_t i : kept)
      total += p[i] = std::exp((logits[i] - largest) / s.temperature);
    std::vector<int> counts(logits.size(), 0);
    constexpr int kDraws = 40000;
    for (int draw = 0; draw < kDraws; ++draw) {
      s.seed = draw;
      ++counts[sampleToken(logits, s, draw % 5)];
    }
    for (size_t i = 0; i < logits.size(); ++i)
      EXPECT_NEAR(counts[i] / double(kDraws), p[i] / total, 0.012)
          << "token " << i << ", temperature " << s.temperature << ", top_k " << s.topK
          << ", top_p " << s.topP << ", min_p " << s.minP;
  }
}

TEST(Sampling, TheRepetitionPenaltyIsHuggingFaces) {
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, -2.0f, 0.0f};
  std::vector<int64_t> context = {3, 1, 3, 3, -1, 0, 99};
  kernels::applyRepetitionPenalty(logits, context, 2.0f);
  // Each distinct token once: positive logits divided, others multiplied;
  // unknown (-1) and out-of-range tokens skipped.
  std::vector<float> expected = {1.0f, -2.0f, 0.5f, 1.5f, -2.0f, 0.0f};
  EXPECT_EQ(logits, expected);
  std::vector<float> unchanged = {2.0f, -1.0f};
  kernels::applyRepetitionPenalty(unchanged, context, 1.0f);
  EXPECT_EQ(unchanged, (std::vector<float>{2.0f, -1.0f}));
}

TEST(Sampling, BadSettingsAreRefusedByName) {
  auto problem = [](MkSamplingSettings s) { return kernels::checkSamplingSettings(s); };
  EXPECT_EQ(problem(mk_sampling_greedy()), "");
  EXPECT_EQ(problem(settings(0.7f, 40, 0.9f, 0.05f)), "");
  EXPECT_NE(problem(settings(-1.0f)).find("temperature"), std::string::npos);
  EXPECT_NE(problem(settings(NAN)).find("temperature"), std::string::npos);
  EXPECT_NE(problem(settings(1.0f, 0, 0.0f)).find("top_p"), std::string::npos);
  EXPECT_NE(problem(settings(1.0f, 0, 1.5f)).find("top_p"), std::string::npos);
  EXPECT_NE(problem(settings(1.0f, 0, 1.0f, -0.1f)).find("min_p"), std::string::npos);
  EXPECT_NE(problem(settings(1.0f, 5000)).find("top_k"), std::string::npos);
  MkSamplingSettings penalty = mk_sampling_greedy();
  penalty.repetitionPenalty = 0.0f;
  EXPECT_NE(problem(penalty).find("repetition_penalty"), std::string::npos);
}

// The executor: sampled generation in one launch is a function of the seed,
// the same in every mode and whether fed at once or continued.
TEST(SamplingExecutor, SameSeedSameTokensInEveryModeAndSplit) {
  toy::ToyModel model = toy::buildToyModel(4);
  GenerateOptions options;
  options.sampling = settings(1.0f, 0, 0.95f, 0.0f, 1234);
  options.sampling.repetitionPenalty = 1.3f;
  std::vector<int64_t> prompt = {3, 17, 5};
  std::vector<int64_t> first;
  for (CpuExecutorOptions mode : {CpuExecutorOptions{.threaded = false},
                                  CpuExecutorOptions{.threaded = true, .adversarialSeed = 5},
                                  CpuExecutorOptions{.threaded = false, .checked = true}}) {
    CpuExecutor executor(model.graph, model.schedule, model.weights, mode);
    std::vector<int64_t> tokens = executor.generate(prompt, 8, options);
    ASSERT_EQ(tokens.size(), 8u);
    if (first.empty())
      first = tokens;
    EXPECT_EQ(tokens, first);
  }
  // Fed in two calls: the second feeds the first's last token, which the
  // first returned and did not feed.
  CpuExecutor split(model.graph, model.schedule, model.weights, {.threaded = false});
  std::vector<int64_t> head = split.generate(prompt, 3, options);
  std::vector<int64_t> tail = split.generate({head.back()}, 6, options);
  head.insert(head.end(), tail.begin(), tail.end());
  EXPECT_EQ(std::vector<int64_t>(head.begin(), head.begin() + 8), first);

  // Another seed, another sequence (with 37 tokens, a collision of 8 is
  // vanishingly unlikely); greedy through the options is the old greedy.
  options.sampling.seed = 99;
  CpuExecutor other(model.graph, model.schedule, model.weights, {.threaded = false});
  EXPECT_NE(other.generate(prompt, 8, options), first);
  CpuExecutor greedy(model.graph, model.schedule, model.weights, {.threaded = false});
  CpuExecutor plain(model.graph, model.schedule, model.weights, {.threaded = false});
  EXPECT_EQ(greedy.generate(prompt, 8, GenerateOptions{}), plain.generate(prompt, 8));
}

TEST(SamplingExecutor, StopsAfterEosAndAtTheHostsWord) {
  toy::ToyModel model = toy::buildToyModel(4);
  std::vector<int64_t> prompt = {3, 17, 5};
  CpuExecutor reference(model.graph, model.schedule, model.weights, {.threaded = false});
  std::vector<int64_t> all = reference.generate(prompt, 8);

  for (bool threaded : {false, true}) {
    CpuExecutor executor(model.graph, model.schedule, model.weights, {.threaded = threaded});
    GenerateOptions options;
    std::vector<std::pair<int64_t, int64_t>> seen;
    options.onToken = [&](int64_t index, int64_t token) {
      seen.push_back({index, token});
      return index == 2;
    };
    std::vector<int64_t> tokens = executor.generate(prompt, 8, options);
    EXPECT_EQ(tokens, std::vector<int64_t>(all.begin(), all.begin() + 3));
    ASSERT_EQ(seen.size(), 3u);
    for (int64_t i = 0; i < 3; ++i)
      EXPECT_EQ(seen[i], std::make_pair(i, all[i]));
    EXPECT_TRUE(executor.lastStop().byHost);
    // Stopped after the step of the third token: its position is not fed.
    EXPECT_EQ(executor.position(), static_cast<int64_t>(prompt.size()) + 2);

    CpuExecutor eos(model.graph, model.schedule, model.weights, {.threaded = threaded});
    GenerateOptions atEos;
    atEos.eosTokens = {all[4]};
    std::vector<int64_t> cut = eos.generate(prompt, 8, atEos);
    size_t firstEos = std::find(all.begin(), all.end(), all[4]) - all.begin();
    EXPECT_EQ(cut, std::vector<int64_t>(all.begin(), all.begin() + firstEos + 1));
    EXPECT_TRUE(eos.lastStop().atEos);
  }
}

} // namespace
} // namespace mk
