// The CPU executor against a direct computation with the interpreter's
// kernels (tolerance 1e-5 relative to max(1, |reference|)), in every mode,
// and its results bit for bit across runs and modes.
#include "ToyTaskGraph.h"

#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/ControlBlock.h"

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

// A step of `token` fails with a message holding `fragment`.
void expectStepFails(CpuExecutor &executor, int64_t token, const std::string &fragment) {
  try {
    executor.step(token);
    ADD_FAILURE() << "the step ran; expected it to fail with: " << fragment;
  } catch (const ExecutionError &error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
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

// Steps of several rows on the hand-made graph (toy::makeRows) against the
// direct computation: a prefill chunk of 3 gives every position's logits,
// and each sequence of a batch of 2 its own.
TEST(CpuExecutor, PrefillsAndBatchesAsTheKernelsStepByStep) {
  for (const Mode &mode : allModes()) {
    toy::ToyModel model = buildToyModel(4);
    toy::ToyModel chunk = buildToyModel(4);
    toy::makeRows(chunk.graph, 3, 1);
    CpuExecutor executor(model.graph, model.schedule, model.weights, mode.options);
    executor.addPrefillGraph(chunk.graph, chunk.schedule);
    toy::ToyReference reference(model.weights);
    std::vector<float> logits = executor.prefill(kTokens, /*everyPosition=*/true);
    ASSERT_EQ(logits.size(), kTokens.size() * toy::kVocab);
    for (size_t i = 0; i < kTokens.size(); ++i)
      expectClose(std::vector<float>(logits.begin() + i * toy::kVocab,
                                     logits.begin() + (i + 1) * toy::kVocab),
                  reference.step(kTokens[i]),
                  std::string(mode.name) + ", prefill position " + std::to_string(i));
    // Decode goes on from the caches the chunk filled.
    expectClose(executor.step(7), reference.step(7), std::string(mode.name) + ", decode after");

    toy::ToyModel batch = buildToyModel(4);
    toy::makeRows(batch.graph, 2, 2);
    CpuExecutor batcher(batch.graph, batch.schedule, batch.weights, mode.options);
    std::vector<std::vector<int64_t>> prompts = {{3, 17, 5}, {36, 0}};
    std::vector<std::vector<int64_t>> tokens = batcher.generateBatch(prompts, 4);
    for (size_t s = 0; s < prompts.size(); ++s) {
      CpuExecutor alone(model.graph, model.schedule, model.weights, mode.options);
      EXPECT_EQ(tokens[s], alone.generate(prompts[s], 4)) << mode.name << ", sequence " << s;
    }
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

// Greedy from the lm_head tiles' picks gives the tokens of greedy from the
// logits, in every mode, over prompts long enough to see ties broken alike;
// and a non-finite logit is named as from the logits.
TEST(CpuExecutor, PicksTheLogitsTokensFromTheirPicks) {
  for (const Mode &mode : allModes()) {
    toy::ToyModel plain = buildToyModel(4), picked = buildToyModel(4);
    toy::addLogitPicks(picked.graph);
    CpuExecutor fromLogits(plain.graph, plain.schedule, plain.weights, mode.options);
    CpuExecutor fromPicks(picked.graph, picked.schedule, picked.weights, mode.options);
    EXPECT_EQ(fromPicks.generate(kTokens, 4), fromLogits.generate(kTokens, 4)) << mode.name;
  }
  toy::ToyModel model = buildToyModel(4);
  toy::addLogitPicks(model.graph);
  WeightTable poisoned;
  for (const auto &[name, weight] : model.weights.all()) {
    Weight copy = weight;
    if (name == "lm_head") // rows 20 and 30 infinite: the lowest is named
      for (uint64_t row : {30u, 20u})
        std::fill_n(copy.values.begin() + row * (copy.values.size() / toy::kVocab),
                    copy.values.size() / toy::kVocab, std::numeric_limits<float>::infinity());
    poisoned.add(std::move(copy));
  }
  CpuExecutor executor(model.graph, model.schedule, poisoned, {.checked = true});
  expectStepFails(executor, 1, "logit 20 is");
}

// Merges run inline (on the SM of their KV head's last chunk) give the bits
// of merges run from a queue, in every mode.
TEST(CpuExecutor, RunsInlineTasksWhereTheirEventCompletes) {
  for (const Mode &mode : allModes())
    for (uint32_t sms : {1u, 4u, 7u}) {
      toy::ToyModel queued = buildToyModel(sms), inlined = buildToyModel(sms);
      toy::inlineMerges(inlined);
      CpuExecutor fromQueues(queued.graph, queued.schedule, queued.weights, mode.options);
      CpuExecutor inline_(inlined.graph, inlined.schedule, inlined.weights, mode.options);
      for (size_t i = 0; i < kTokens.size(); ++i)
        ASSERT_EQ(inline_.step(kTokens[i]), fromQueues.step(kTokens[i]))
            << mode.name << ", " << sms << " SMs, step " << i;
    }
}

// Every launch times its steps; with options.trace it also records, per
// step and task, when its SM began waiting, when the task started and ended,
// in that order and on one clock: no task starts before the tasks that
// trigger the events it waits on have ended.
TEST(CpuExecutor, TimesEveryStepAndTracesEveryTaskOnRequest) {
  for (const Mode &mode : {Mode{"threaded", {.threaded = true, .trace = true}},
                           Mode{"single thread", {.threaded = false, .trace = true}},
                           Mode{"threaded, adversarial",
                                {.threaded = true, .adversarialSeed = 5, .trace = true}}}) {
    toy::ToyModel model = buildToyModel(4);
    const TaskGraph &graph = model.graph;
    CpuExecutor executor(graph, model.schedule, model.weights, mode.options);
    executor.generate({3, 17, 5}, 4);
    const size_t steps = 6, tasks = graph.tasks.size();
    ASSERT_EQ(executor.stepMilliseconds().size(), steps) << mode.name;
    for (double ms : executor.stepMilliseconds())
      EXPECT_GT(ms, 0) << mode.name;

    std::span<const uint64_t> trace = executor.trace();
    ASSERT_EQ(trace.size(), steps * tasks * MK_TRACE_TIMES) << mode.name;
    auto time = [&](size_t step, uint32_t task, int which) {
      return trace[(step * tasks + task) * MK_TRACE_TIMES + which];
    };
    for (size_t step = 0; step < steps; ++step)
      for (uint32_t id = 0; id < tasks; ++id) {
        std::string what = std::string(mode.name) + ", step " + std::to_string(step) + ", task " +
                           std::to_string(id);
        EXPECT_GT(time(step, id, MK_TRACE_WAIT), 0u) << what;
        EXPECT_LE(time(step, id, MK_TRACE_WAIT), time(step, id, MK_TRACE_START)) << what;
        EXPECT_LE(time(step, id, MK_TRACE_START), time(step, id, MK_TRACE_END)) << what;
        for (const Wait &wait : graph.tasks[id].waits) {
          int64_t producerStep = static_cast<int64_t>(step) + wait.stepOffset;
          if (producerStep < 0)
            continue;
          for (uint32_t producer = 0; producer < tasks; ++producer) {
            if (graph.tasks[producer].trigger != wait.event)
              continue;
            EXPECT_LE(time(producerStep, producer, MK_TRACE_END), time(step, id, MK_TRACE_START))
                << what << " started before task " << producer << " ended";
          }
        }
      }

    // The next launch replaces both.
    executor.step(1);
    EXPECT_EQ(executor.stepMilliseconds().size(), 1u) << mode.name;
    EXPECT_EQ(executor.trace().size(), tasks * MK_TRACE_TIMES) << mode.name;
  }
}

TEST(CpuExecutor, TracesOnlyWhenAskedAndWithinItsBound) {
  toy::ToyModel model = buildToyModel(4);
  CpuExecutor untraced(model.graph, model.schedule, model.weights);
  untraced.generate({3, 17}, 2);
  EXPECT_EQ(untraced.stepMilliseconds().size(), 3u);
  EXPECT_TRUE(untraced.trace().empty());

  CpuExecutor bounded(model.graph, model.schedule, model.weights,
                      {.trace = true, .maxTraceBytes = 2 * model.graph.tasks.size() * 24});
  EXPECT_NO_THROW(bounded.generate({3}, 2));
  try {
    bounded.generate({3}, 3);
    ADD_FAILURE() << "traced past maxTraceBytes";
  } catch (const ExecutionError &error) {
    EXPECT_NE(std::string(error.what()).find("trace fewer steps"), std::string::npos)
        << error.what();
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

// A NaN reaching the attention goes on as NaN, as on the GPU, and the argmax
// names the first non-finite logit as the kernel's MK_ERROR_NON_FINITE_LOGIT
// does, in every mode: not an empty attention, not a token.
TEST(CpuExecutor, ReportsNonFiniteLogitsAsTheKernelDoes) {
  toy::ToyModel model = buildToyModel(4);
  WeightTable poisoned;
  for (const auto &[name, weight] : model.weights.all()) {
    Weight copy = weight;
    if (name == "embed")
      std::fill(copy.values.begin(), copy.values.end(), std::numeric_limits<float>::quiet_NaN());
    poisoned.add(std::move(copy));
  }
  for (bool checked : {false, true}) {
    CpuExecutor executor(model.graph, model.schedule, poisoned, {.checked = checked});
    expectStepFails(executor, 1, "logit 0 is NaN: the model computes non-finite logits");
  }
}

TEST(CpuExecutor, RefusesToRunPastTheContext) {
  toy::ToyModel model = buildToyModel(4);
  CpuExecutor executor(model.graph, model.schedule, model.weights);
  EXPECT_THROW(executor.generate({1, 2}, toy::kMaxContext), ExecutionError);
  EXPECT_THROW(executor.generate({1}, std::numeric_limits<int64_t>::max()), ExecutionError);
  EXPECT_THROW(executor.generate({}, 1), ExecutionError) << "nothing to continue from";
  for (int64_t i = 0; i < toy::kMaxContext; ++i)
    executor.step(i % toy::kVocab);
  expectStepFails(executor, 1, "context is full");
}

// A start position places the first token there, the cache below it all
// zeros, as a reference computed op by op with the same zeros; positions,
// step times and the trace count from it.
TEST(CpuExecutor, StartsAtAPositionOverAZeroCache) {
  const int64_t start = toy::kMaxContext - 5;
  for (const Mode &mode : allModes()) {
    if (mode.options.checked)
      continue; // checked mode refuses reading slots never written: below
    toy::ToyModel model = buildToyModel(4);
    CpuExecutorOptions options = mode.options;
    options.trace = true;
    CpuExecutor executor(model.graph, model.schedule, model.weights, options);
    toy::ToyReference reference(model.weights);
    executor.startAt(start);
    reference.startAt(start);
    for (size_t i = 0; i < 3; ++i)
      expectClose(executor.step(kTokens[i]), reference.step(kTokens[i]),
                  std::string(mode.name) + ", step " + std::to_string(i) + " from " +
                      std::to_string(start));
    EXPECT_EQ(executor.position(), start + 3);
  }

  toy::ToyModel model = buildToyModel(4);
  CpuExecutor fresh(model.graph, model.schedule, model.weights, {.threaded = false});
  fresh.startAt(start);
  std::vector<int64_t> tokens = fresh.generate({3, 17}, 3);
  EXPECT_EQ(tokens.size(), 3u);
  EXPECT_EQ(fresh.position(), start + 4);
  EXPECT_EQ(fresh.stepMilliseconds().size(), 4u);
  EXPECT_THROW(fresh.generate({}, 2), ExecutionError) << "one position left";

  CpuExecutor bounds(model.graph, model.schedule, model.weights);
  EXPECT_THROW(bounds.startAt(-1), ExecutionError);
  EXPECT_THROW(bounds.startAt(toy::kMaxContext + 1), ExecutionError);
  bounds.startAt(toy::kMaxContext);
  EXPECT_THROW(bounds.step(1), ExecutionError) << "no room left";

  CpuExecutor checked(model.graph, model.schedule, model.weights, {.checked = true});
  checked.startAt(2);
  EXPECT_THROW(checked.step(1), ExecutionError) << "slots 0 and 1 were never written";
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
