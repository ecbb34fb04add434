// Steps of several rows (docs/m-token-steps.md) against the decode graph
// they generalise, on the CPU executor, from the compiler's own path
// (compileToSchedule with --prefill-chunk and --batch):
//
// - a prefill chunk of M rows gives, at every prompt position, the logits
//   M = 1 steps give, bit for bit: each row runs the same arithmetic, and a
//   row reads the keys of the chunk's earlier rows as computed, which are
//   the bits the cache would hold;
// - generate() through the prefill graph then decodes the same tokens;
// - each sequence of a batch gets the tokens its own batch-1 run gets, also
//   with sampling and a repetition penalty (seeded per position, counted
//   per sequence) and with one sequence stopping early at an EOS.
//
// Shapes cover GQA and MHA, q/k norm, biases, partial rotary and none, and
// contexts long enough that the attention's chunks split differently from
// position to position. Every run is in checked mode, most threaded with
// adversarial timing, so a missing dependency between rows fails loudly.
#include "CompileShape.h"

#include "compiler/driver/RandomWeights.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>

namespace {

using mk::test::ModelShape;

struct RowCase {
  std::string name;
  ModelShape shape;
  int64_t maxContext = 48;
  uint32_t numSms = 5;
  int64_t prefillChunk = 4;
  int64_t batch = 3;
  bool threaded = true;
};

void PrintTo(const RowCase &c, std::ostream *os) { *os << c.name; }

std::vector<RowCase> rowCases() {
  std::vector<RowCase> cases;
  cases.push_back({"gqa", {}, 48, 5, 4, 3, true});
  RowCase qwen3{"qwen3_qknorm_one_kv_head"};
  qwen3.shape.kvHeads = 1;
  qwen3.shape.qkNorm = true;
  qwen3.prefillChunk = 7;
  cases.push_back(qwen3);
  RowCase biases{"mha_biases_partial_rotary"};
  biases.shape.heads = biases.shape.kvHeads = 3;
  biases.shape.headDim = 10;
  biases.shape.rotaryDim = 4;
  biases.shape.qkvBiases = biases.shape.otherBiases = true;
  biases.numSms = 132;
  biases.batch = 2;
  cases.push_back(biases);
  RowCase plain{"no_rotary_interleaved_off_single_thread"};
  plain.shape.rotary = false;
  plain.shape.headDim = 7;
  plain.shape.tied = true;
  plain.threaded = false;
  plain.prefillChunk = 16;
  plain.batch = 5;
  cases.push_back(plain);
  RowCase longer{"long_context_chunks"};
  longer.shape.layers = 1;
  longer.maxContext = 300;
  longer.numSms = 33;
  longer.prefillChunk = 64;
  longer.batch = 4;
  cases.push_back(longer);
  return cases;
}

class RowStepsTest : public ::testing::TestWithParam<RowCase> {
protected:
  void SetUp() override {
    const RowCase &c = GetParam();
    mk::CompileOptions options;
    options.maxContext = c.maxContext;
    options.target.numSms = c.numSms;
    options.prefillChunk = c.prefillChunk;
    options.batchSizes = {c.batch};
    // Merge tasks, as the steps of several rows have: their logits are
    // decode's bit for bit (a decode step by head sums o_proj in fixed point).
    options.target.oProjByHead = mk::TargetDescription::ByHead::Off;
    auto model = mk::test::compileShape(context, c.shape, options);
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    compiled.emplace(std::move(*model));
    ASSERT_EQ(compiled->rowSteps.size(), 2u);
    weights = mk::randomWeights(compiled->tasks, 20261201);
  }

  mk::CpuExecutorOptions executorOptions(uint64_t seed) const {
    mk::CpuExecutorOptions options;
    options.checked = true;
    options.threaded = GetParam().threaded;
    options.adversarialSeed = seed;
    return options;
  }

  std::unique_ptr<mk::CpuExecutor> decoder(uint64_t seed, bool withPrefill = false) {
    auto executor = std::make_unique<mk::CpuExecutor>(compiled->tasks, compiled->schedule,
                                                      weights, executorOptions(seed));
    if (withPrefill)
      executor->addPrefillGraph(prefillStep().graph, prefillStep().schedule);
    return executor;
  }

  std::unique_ptr<mk::CpuExecutor> batcher(uint64_t seed) {
    const mk::ScheduledGraph &batch = compiled->rowSteps[1];
    return std::make_unique<mk::CpuExecutor>(batch.graph, batch.schedule, weights,
                                             executorOptions(seed));
  }

  const mk::ScheduledGraph &prefillStep() const { return compiled->rowSteps[0]; }

  std::vector<int64_t> randomTokens(size_t count, uint64_t seed) const {
    std::mt19937_64 engine(seed);
    std::vector<int64_t> tokens(count);
    for (int64_t &token : tokens)
      token = static_cast<int64_t>(engine() % GetParam().shape.vocab);
    return tokens;
  }

  mlir::MLIRContext context;
  std::optional<mk::CompiledModel> compiled;
  mk::WeightTable weights;
};

// Bit for bit: NaN-free logits compared as their bits.
void expectSameBits(std::span<const float> actual, std::span<const float> expected,
                    const std::string &where) {
  ASSERT_EQ(actual.size(), expected.size()) << where;
  for (size_t i = 0; i < actual.size(); ++i)
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0) {
      ADD_FAILURE() << where << ", logit " << i << ": " << actual[i] << " vs " << expected[i];
      return;
    }
}

TEST_P(RowStepsTest, GraphsHaveTheirRows) {
  const RowCase &c = GetParam();
  EXPECT_EQ(compiled->tasks.rows, 1);
  EXPECT_EQ(prefillStep().graph.rows, c.prefillChunk);
  EXPECT_EQ(prefillStep().graph.sequences, 1);
  EXPECT_EQ(compiled->rowSteps[1].graph.rows, c.batch);
  EXPECT_EQ(compiled->rowSteps[1].graph.sequences, c.batch);
  // The same tasks as decode: weights are streamed once a step, whatever its rows.
  EXPECT_EQ(prefillStep().graph.tasks.size(), compiled->tasks.tasks.size());
}

TEST_P(RowStepsTest, PrefillGivesTheLogitsOfDecodeStepsAtEveryPosition) {
  const RowCase &c = GetParam();
  // A prompt that ends inside a chunk, then a second one from where it ended.
  int64_t first = std::min<int64_t>(2 * c.prefillChunk + 3, c.maxContext / 2);
  int64_t second = std::min<int64_t>(c.prefillChunk + 1, c.maxContext - first - 4);
  std::vector<int64_t> prompt = randomTokens(first + second, 7);
  std::span<const int64_t> all(prompt);
  try {
    auto reference = decoder(0);
    std::vector<std::vector<float>> expected;
    for (int64_t token : prompt)
      expected.push_back(reference->step(token));

    auto executor = decoder(11, /*withPrefill=*/true);
    ASSERT_EQ(executor->prefillRows(), c.prefillChunk);
    std::vector<float> logits = executor->prefill(all.first(first), /*everyPosition=*/true);
    std::vector<float> more = executor->prefill(all.subspan(first), /*everyPosition=*/true);
    logits.insert(logits.end(), more.begin(), more.end());
    EXPECT_EQ(executor->position(), first + second);
    uint64_t vocab = c.shape.vocab;
    ASSERT_EQ(logits.size(), prompt.size() * vocab);
    for (size_t p = 0; p < prompt.size(); ++p)
      expectSameBits(std::span<const float>(logits).subspan(p * vocab, vocab), expected[p],
                     "position " + std::to_string(p));
    // Without every position: the last one's.
    auto lastOnly = decoder(12, true);
    std::vector<float> last = lastOnly->prefill(all);
    expectSameBits(last, expected.back(), "the last position alone");
  } catch (const mk::ExecutionError &error) {
    FAIL() << error.what();
  }
}

TEST_P(RowStepsTest, GenerateThroughPrefillDecodesTheSameTokens) {
  const RowCase &c = GetParam();
  std::vector<int64_t> prompt = randomTokens(std::min<int64_t>(3 * c.prefillChunk - 1, 20), 8);
  int64_t newTokens = 6;
  try {
    auto reference = decoder(0);
    std::vector<int64_t> expected = reference->generate(prompt, newTokens);
    std::vector<int64_t> expectedMore = reference->generate({}, 3);

    auto executor = decoder(21, true);
    EXPECT_EQ(executor->generate(prompt, newTokens), expected);
    EXPECT_EQ(executor->position(), reference->position() - 3);
    EXPECT_EQ(executor->generate({}, 3), expectedMore);
    expectSameBits(executor->logits(), reference->logits(), "the last step");
  } catch (const mk::ExecutionError &error) {
    FAIL() << error.what();
  }
}

// Each sequence's tokens from its own decode executor.
std::vector<std::vector<int64_t>>
oneByOne(const std::function<std::unique_ptr<mk::CpuExecutor>()> &make,
         const std::vector<std::vector<int64_t>> &prompts, int64_t newTokens,
         const mk::GenerateOptions &options) {
  std::vector<std::vector<int64_t>> tokens;
  for (const std::vector<int64_t> &prompt : prompts)
    tokens.push_back(make()->generate(prompt, newTokens, options));
  return tokens;
}

TEST_P(RowStepsTest, EachSequenceOfABatchGetsItsOwnTokens) {
  const RowCase &c = GetParam();
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t s = 0; s < c.batch; ++s)
    prompts.push_back(randomTokens(1 + 3 * s, 100 + s));
  int64_t newTokens = 5;
  try {
    auto make = [&] { return decoder(0); };
    std::vector<std::vector<int64_t>> expected = oneByOne(make, prompts, newTokens, {});
    auto executor = batcher(31);
    EXPECT_EQ(executor->generateBatch(prompts, newTokens), expected);
    for (int64_t s = 0; s < c.batch; ++s)
      EXPECT_EQ(executor->positionOf(s),
                static_cast<int64_t>(prompts[s].size()) + newTokens - 1);

    // Continued from where each stopped, as a decode executor continues.
    std::vector<std::vector<int64_t>> continued;
    for (const std::vector<int64_t> &prompt : prompts) {
      auto one = decoder(0);
      one->generate(prompt, newTokens);
      continued.push_back(one->generate({}, 2));
    }
    EXPECT_EQ(executor->generateBatch(std::vector<std::vector<int64_t>>(c.batch), 2), continued);

    // Fewer prompts than rows: the other rows idle.
    auto fewer = batcher(32);
    std::vector<std::vector<int64_t>> one(prompts.begin(), prompts.begin() + 1);
    EXPECT_EQ(fewer->generateBatch(one, newTokens),
              std::vector<std::vector<int64_t>>(expected.begin(), expected.begin() + 1));
  } catch (const mk::ExecutionError &error) {
    FAIL() << error.what();
  }
}

TEST_P(RowStepsTest, BatchSamplingAndStopsFollowEachSequence) {
  const RowCase &c = GetParam();
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t s = 0; s < c.batch; ++s)
    prompts.push_back(randomTokens(2 + 2 * s, 200 + s));
  mk::GenerateOptions sampled;
  sampled.sampling = mk_sampling_greedy();
  sampled.sampling.temperature = 0.9f;
  sampled.sampling.topK = 20;
  sampled.sampling.repetitionPenalty = 1.3f;
  sampled.sampling.seed = 4242;
  int64_t newTokens = 6;
  try {
    auto make = [&] { return decoder(0); };
    std::vector<std::vector<int64_t>> expected = oneByOne(make, prompts, newTokens, sampled);
    EXPECT_EQ(batcher(41)->generateBatch(prompts, newTokens, sampled), expected);

    // An EOS that sequence 0 picks second: it stops there, the others go on
    // (or stop where they pick it themselves).
    std::vector<std::vector<int64_t>> greedy = oneByOne(make, prompts, newTokens, {});
    mk::GenerateOptions stopping;
    stopping.eosTokens = {greedy[0][1]};
    std::vector<std::vector<int64_t>> stopped = oneByOne(make, prompts, newTokens, stopping);
    size_t firstEos = std::find(greedy[0].begin(), greedy[0].end(), greedy[0][1]) - greedy[0].begin();
    EXPECT_EQ(stopped[0].size(), firstEos + 1);
    EXPECT_EQ(batcher(42)->generateBatch(prompts, newTokens, stopping), stopped);
  } catch (const mk::ExecutionError &error) {
    FAIL() << error.what();
  }
}

TEST_P(RowStepsTest, RowGraphsRefuseTheCallsOfAnother) {
  auto batch = batcher(0);
  EXPECT_THROW(batch->step(1), mk::ExecutionError);
  EXPECT_THROW(batch->generate({1}, 2), mk::ExecutionError);
  auto plain = decoder(0);
  EXPECT_THROW(plain->prefill(std::vector<int64_t>{1, 2}), mk::ExecutionError);
  const mk::ScheduledGraph &other = compiled->rowSteps[1];
  EXPECT_THROW(plain->addPrefillGraph(other.graph, other.schedule), mk::ExecutionError);
  std::vector<std::vector<int64_t>> tooMany(GetParam().batch + 1, std::vector<int64_t>{1});
  EXPECT_THROW(batch->generateBatch(tooMany, 2), mk::ExecutionError);
}

INSTANTIATE_TEST_SUITE_P(Shapes, RowStepsTest, ::testing::ValuesIn(rowCases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
