// The CPU executor against a direct computation with the interpreter's
// kernels (tolerance 1e-5 relative to max(1, |reference|)), in every mode,
// and its results bit for bit across runs and modes.
#include "ToyTaskGraph.h"

#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace mk {
namespace {

using toy::buildToyModel;

const std::vector<int64_t> kTokens = {3, 17, 5, 36, 0, 22, 9, 5};

struct Mode {
  const char *name;
  CpuExecutorOptions options;
};

std::vector<Mode> allModes() {
  return {
      {"threaded", {.threaded = true}},
      {"single thread", {.threaded = false}},
      {"threaded, checked", {.threaded = true, .checked = true}},
      {"threaded, adversarial", {.threaded = true, .adversarialSeed = 11}},
      {"threaded, adversarial, checked", {.threaded = true, .adversarialSeed = 12, .checked = true}},
      {"single thread, adversarial, checked",
       {.threaded = false, .adversarialSeed = 13, .checked = true}},
  };
}

void expectClose(const std::vector<float> &actual, const std::vector<float> &expected,
                 const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_LE(std::fabs(actual[i] - expected[i]), 1e-5f * std::max(1.0f, std::fabs(expected[i])))
        << what << ", logit " << i << ": " << actual[i] << " vs " << expected[i];
}

TEST(CpuExecutor, MatchesTheKernelsStepByStepInEveryMode) {
  for (const Mode &mode : allModes())
    for (uint32_t sms : {1u, 4u, 7u}) {
      toy::ToyModel model = buildToyModel(sms);
      CpuExecutor executor(model.graph, model.schedule, model.weights, mode.options);
      toy::ToyReference reference(model.weights);
      for (size_t i = 0; i < kTokens.size(); ++i)
        expectClose(executor.step(kTokens[i]), reference.step(kTokens[i]),
                    std::string(mode.name) + ", " + std::to_string(sms) + " SMs, step " +
                        std::to_string(i));
      EXPECT_EQ(executor.position(), static_cast<int64_t>(kTokens.size()));
    }
}

TEST(CpuExecutor, GivesTheSameBitsInEveryRunAndMode) {
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 2; ++run)
    for (const Mode &mode : allModes())
      for (uint32_t sms : {3u, 4u}) {
        toy::ToyModel model = buildToyModel(sms);
        CpuExecutor executor(model.graph, model.schedule, model.weights, mode.options);
        for (size_t i = 0; i < kTokens.size(); ++i) {
          std::vector<float> logits = executor.step(kTokens[i]);
          if (first.size() <= i) {
            first.push_back(logits);
            continue;
          }
          ASSERT_EQ(logits.size(), first[i].size());
          EXPECT_EQ(std::memcmp(logits.data(), first[i].data(), logits.size() * sizeof(float)), 0)
              << mode.name << ", " << sms << " SMs, step " << i;
        }
      }
}

// Greedy decoding by the reference: feed the prompt, then each argmax.
std::vector<int64_t> referenceGreedy(toy::ToyReference &reference, std::vector<int64_t> prompt,
                                     int64_t newTokens, std::vector<float> &lastLogits) {
  std::vector<int64_t> generated;
  for (int64_t token : prompt)
    lastLogits = reference.step(token);
  for (int64_t i = 0; i < newTokens; ++i) {
    generated.push_back(kernels::argmax(lastLogits));
    if (i + 1 < newTokens)
      lastLogits = reference.step(generated.back());
  }
  return generated;
}

TEST(CpuExecutor, GeneratesInOneLaunchWhatGreedyDecodingGives) {
  for (const Mode &mode : allModes()) {
    toy::ToyModel model = buildToyModel(4);
    CpuExecutor executor(model.graph, model.schedule, model.weights, mode.options);
    toy::ToyReference reference(model.weights);
    std::vector<float> referenceLogits;
    EXPECT_EQ(executor.generate({3, 17, 5}, 4), referenceGreedy(reference, {3, 17, 5}, 4, referenceLogits))
        << mode.name;
    std::vector<float> logits(executor.logits().begin(), executor.logits().end());
    expectClose(logits, referenceLogits, mode.name);
    EXPECT_EQ(executor.position(), 6);

    // An empty prompt continues from the last generated token.
    std::vector<int64_t> continued = executor.generate({}, 3);
    std::vector<int64_t> expected;
    for (int i = 0; i < 3; ++i) {
      referenceLogits = reference.step(kernels::argmax(referenceLogits));
      expected.push_back(kernels::argmax(referenceLogits));
    }
    EXPECT_EQ(continued, expected) << mode.name;
    EXPECT_EQ(executor.position(), 9);
  }
}

TEST(CpuExecutor, RefusesTokensOutsideTheVocabularyAndStaysUsable) {
  toy::ToyModel model = buildToyModel(4);
  CpuExecutor executor(model.graph, model.schedule, model.weights, {.checked = true});
  EXPECT_THROW(executor.step(-1), ExecutionError);
  EXPECT_THROW(executor.step(toy::kVocab), ExecutionError);
  EXPECT_THROW(executor.generate({1, toy::kVocab + 5}, 2), ExecutionError);
  EXPECT_EQ(executor.position(), 0);
  EXPECT_NO_THROW(executor.step(1));
}

TEST(CpuExecutor, RefusesToRunPastTheContext) {
  toy::ToyModel model = buildToyModel(4);
  CpuExecutor executor(model.graph, model.schedule, model.weights);
  EXPECT_THROW(executor.generate({1, 2}, toy::kMaxContext), ExecutionError);
  EXPECT_THROW(executor.generate({1}, std::numeric_limits<int64_t>::max()), ExecutionError);
  EXPECT_THROW(executor.generate({}, 1), ExecutionError) << "nothing to continue from";
  for (int64_t i = 0; i < toy::kMaxContext; ++i)
    executor.step(i % toy::kVocab);
  try {
    executor.step(1);
    ADD_FAILURE() << "stepped past maxContext";
  } catch (const ExecutionError &error) {
    EXPECT_NE(std::string(error.what()).find("context is full"), std::string::npos) << error.what();
  }
}

TEST(CpuExecutor, RefusesInvalidGraphsAndMissingWeights) {
  toy::ToyModel model = buildToyModel(4);
  toy::ToyModel broken = buildToyModel(4);
  broken.graph.events[0].triggerCount = 7;
  EXPECT_THROW(CpuExecutor(broken.graph, broken.schedule, broken.weights), ExecutionError);

  WeightTable missing;
  for (const auto &[name, weight] : model.weights.all())
    if (name != "layer1.up")
      missing.add(weight);
  try {
    CpuExecutor executor(model.graph, model.schedule, missing);
    ADD_FAILURE() << "ran without layer1.up";
  } catch (const ExecutionError &error) {
    EXPECT_NE(std::string(error.what()).find("'layer1.up' is not in the weight table"), std::string::npos)
        << error.what();
  }

  WeightTable reshaped;
  for (auto [name, weight] : model.weights.all()) {
    if (name == "lm_head")
      weight.values.pop_back();
    reshaped.add(weight);
  }
  EXPECT_THROW(CpuExecutor(model.graph, model.schedule, reshaped), ExecutionError);

  EXPECT_THROW(CpuExecutor(model.graph, model.schedule, model.weights, {.maxMemoryBytes = 100}),
               ExecutionError);
}

} // namespace
} // namespace mk
