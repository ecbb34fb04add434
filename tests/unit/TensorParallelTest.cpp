// Tensor parallelism on the CPU executor (compiler/taskgraph/ShardOperations.h,
// runtime/cpu/TensorParallelExecutor.h), from the compiler's own path
// (compileToSchedule with --tensor-parallel): every rank's graph validates,
// the ranks' graphs are alike, and N ranks give the logits of one within
// f32 reassociation (o_proj and down_proj summed in parts, 1e-5 relative),
// and the same greedy tokens, in checked mode with adversarial timing. A
// missing cross-rank wait is refused by the validator.
#include "CompileShape.h"

#include "compiler/driver/RandomWeights.h"
#include "core/validator/Validator.h"
#include "runtime/cpu/TensorParallelExecutor.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/ArtifactFile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

namespace {

using mk::test::ModelShape;

struct TpCase {
  std::string name;
  ModelShape shape;
  int64_t ranks = 2;
  uint32_t numSms = 5;
  bool threaded = true;
};

void PrintTo(const TpCase &c, std::ostream *os) { *os << c.name; }

std::vector<TpCase> tpCases() {
  std::vector<TpCase> cases;
  cases.push_back({"gqa_two_ranks", {}, 2});
  TpCase four{"mha_biases_four_ranks"};
  four.shape.heads = four.shape.kvHeads = 4;
  four.shape.qkvBiases = four.shape.otherBiases = true;
  four.ranks = 4;
  four.threaded = false;
  cases.push_back(four);
  TpCase qwen3{"qwen3_qknorm_partial_rotary"};
  qwen3.shape.qkNorm = true;
  qwen3.shape.rotaryDim = 8;
  qwen3.shape.intermediate = 96;
  qwen3.numSms = 132;
  cases.push_back(qwen3);
  TpCase tied{"tied_three_layers_eight_heads"};
  tied.shape.tied = true;
  tied.shape.layers = 3;
  tied.shape.heads = 8;
  tied.shape.kvHeads = 2;
  tied.shape.headDim = 8;
  cases.push_back(tied);
  return cases;
}

class TensorParallelTest : public ::testing::TestWithParam<TpCase> {
protected:
  void SetUp() override {
    const TpCase &c = GetParam();
    mk::CompileOptions options;
    options.maxContext = 40;
    options.target.numSms = c.numSms;
    options.tensorParallel = c.ranks;
    auto model = mk::test::compileShape(context, c.shape, options);
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    compiled.emplace(std::move(*model));
    ASSERT_EQ(compiled->ranks.size(), static_cast<size_t>(c.ranks));
    weights = mk::randomWeights(compiled->tasks, 20261201);
    mk::addWeightSlices(weights, compiled->weightSlices);
  }

  mk::CpuExecutorOptions options(uint64_t seed) const {
    return {.threaded = GetParam().threaded, .adversarialSeed = seed, .checked = true};
  }

  mlir::MLIRContext context;
  std::optional<mk::CompiledModel> compiled;
  mk::WeightTable weights;
};

TEST_P(TensorParallelTest, EveryRankHoldsItsShare) {
  const TpCase &c = GetParam();
  const mk::TaskGraph &whole = compiled->tasks;
  for (int64_t rank = 0; rank < c.ranks; ++rank) {
    const mk::TaskGraph &graph = compiled->ranks[rank].graph;
    EXPECT_EQ(graph.rank, rank);
    EXPECT_EQ(graph.ranks, c.ranks);
    EXPECT_EQ(mk::validateSchedule(graph, compiled->ranks[rank].schedule), "");
    size_t reductions = 0;
    for (const mk::Operation &op : graph.operations) {
      reductions += op.kind == mk::OpKind::AllReduce;
      if (op.kind == mk::OpKind::Attention) {
        EXPECT_EQ(op.numHeads * c.ranks, c.shape.heads);
        EXPECT_EQ(op.numKvHeads * c.ranks, c.shape.kvHeads);
      }
    }
    EXPECT_EQ(reductions, static_cast<size_t>(2 * c.shape.layers)) << "o_proj and down_proj";
  }
  // Weights are streamed once over all ranks, but the replicated ends.
  uint64_t wholeBytes = 0, rankBytes = 0;
  for (const mk::Task &task : whole.tasks)
    wholeBytes += task.weightBytes;
  for (const mk::Task &task : compiled->ranks[0].graph.tasks)
    rankBytes += task.weightBytes;
  EXPECT_LT(rankBytes, wholeBytes);
}

TEST_P(TensorParallelTest, RanksGiveTheLogitsAndTokensOfOne) {
  const TpCase &c = GetParam();
  std::vector<int64_t> tokens = {3, 17, 5, 36, 0, 22, 9, 5, 41, 7};
  try {
    mk::CpuExecutor one(compiled->tasks, compiled->schedule, weights, options(0));
    mk::TensorParallelExecutor many(compiled->ranks, weights, options(5));
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::vector<float> expected = one.step(tokens[i]), actual = many.step(tokens[i]);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t j = 0; j < actual.size(); ++j)
        ASSERT_LE(std::fabs(actual[j] - expected[j]), 1e-5 * (1 + std::fabs(expected[j])))
            << "step " << i << ", logit " << j;
    }
    EXPECT_EQ(many.position(), static_cast<int64_t>(tokens.size()));

    // Greedy generation from a fresh start: the same tokens while the
    // one-rank logits keep a clear top-2 gap.
    mk::CpuExecutor reference(compiled->tasks, compiled->schedule, weights, options(0));
    mk::TensorParallelExecutor sharded(compiled->ranks, weights, options(6));
    std::vector<int64_t> expected = reference.generate({3, 17, 5}, 8);
    std::vector<int64_t> actual = sharded.generate({3, 17, 5}, 8);
    ASSERT_EQ(actual.size(), expected.size());
    mk::CpuExecutor replay(compiled->tasks, compiled->schedule, weights, options(0));
    std::vector<float> logits;
    for (int64_t token : {3, 17, 5})
      logits = replay.step(token);
    for (size_t i = 0; i < expected.size(); ++i) {
      std::vector<float> sorted = logits;
      std::sort(sorted.begin(), sorted.end());
      bool clear = sorted.size() < 2 || sorted.back() - sorted[sorted.size() - 2] > 1e-3;
      if (!clear)
        break;
      EXPECT_EQ(actual[i], expected[i]) << "token " << i;
      logits = replay.step(expected[i]);
    }
  } catch (const mk::ExecutionError &error) {
    FAIL() << error.what();
  }
}

TEST_P(TensorParallelTest, AMissingCrossRankWaitIsCaught) {
  std::vector<mk::ScheduledGraph> ranks = compiled->ranks;
  bool dropped = false;
  for (mk::ScheduledGraph &rank : ranks)
    for (mk::Task &task : rank.graph.tasks)
      if (task.kind == mk::TaskKind::AllReduce && !dropped)
        for (mk::Wait &wait : task.waits)
          if (wait.allRanks) {
            wait.allRanks = false;
            dropped = true;
            break;
          }
  ASSERT_TRUE(dropped);
  // Dropped on rank 0 only: the ranks then differ, and rank 0 does not validate.
  EXPECT_NE(mk::validateSchedule(ranks[0].graph, ranks[0].schedule).find("on the other ranks"),
            std::string::npos);
  EXPECT_THROW(mk::TensorParallelExecutor(ranks, weights, options(1)), mk::ExecutionError);
  // The funnel: a next step that waits on its own rank's Argmax alone.
  std::vector<mk::ScheduledGraph> funnel = compiled->ranks;
  for (mk::Task &task : funnel[0].graph.tasks)
    for (mk::Wait &wait : task.waits)
      if (wait.stepOffset == -1)
        wait.allRanks = false;
  EXPECT_NE(mk::validateSchedule(funnel[0].graph, funnel[0].schedule).find("on every rank"),
            std::string::npos);
}

// The .mk carries the ranks (RANKS) beside the one-GPU model, and the weight
// slices as (source, rows, columns): made from WEIGHTS at load, no bytes
// more. What does not fit is refused naming the rank or the slice.
TEST_P(TensorParallelTest, TheMkCarriesTheRanks) {
  std::string error;
  mk::ArtifactOptions artifactOptions;
  artifactOptions.ranks = compiled->ranks;
  artifactOptions.weightSlices = compiled->weightSlices;
  artifactOptions.compilerVersion = "mkc 0.1.0";
  auto built = mk::buildArtifact(compiled->tasks, compiled->schedule, weights, artifactOptions, error);
  ASSERT_NE(built, nullptr) << error;
  std::string path = ::testing::TempDir() + "/tensor-parallel-" + GetParam().name + ".mk";
  ASSERT_TRUE(mk::writeArtifact(path, built->artifact, error)) << error;
  auto loaded = mk::loadArtifact(path, error);
  ASSERT_NE(loaded, nullptr) << error;
  EXPECT_EQ(loaded->artifact.ranks.size(), compiled->ranks.size());
  EXPECT_EQ(loaded->artifact.weightSlices.size(), compiled->weightSlices.size());

  const mk::Artifact &artifact = built->artifact;
  auto refusal = [&](const std::function<void(std::vector<mk::ScheduledGraph> &,
                                              std::vector<mk::WeightSlice> &)> &edit) {
    std::vector<mk::ScheduledGraph> ranks = artifact.ranks;
    std::vector<mk::WeightSlice> slices = artifact.weightSlices;
    edit(ranks, slices);
    return mk::checkRanks(artifact.graph, ranks, slices, artifact.weights);
  };
  EXPECT_EQ(refusal([](auto &, auto &) {}), "");
  EXPECT_NE(refusal([](auto &ranks, auto &) { std::swap(ranks[0], ranks[1]); })
                .find("rank 0 says it is rank 1"),
            std::string::npos);
  EXPECT_NE(refusal([](auto &, auto &slices) { slices[0].colEnd += 1000; })
                .find("not a non-empty block"),
            std::string::npos);
  EXPECT_NE(refusal([](auto &, auto &slices) { slices[0].source = "nothing"; })
                .find("which is not in the weight index"),
            std::string::npos);
  EXPECT_NE(refusal([](auto &, auto &slices) { slices.pop_back(); })
                .find("is not in the weight index"),
            std::string::npos);
  // One rank fewer: too few ranks, or ranks that say they are of more.
  EXPECT_NE(refusal([](auto &ranks, auto &) { ranks.pop_back(); }), "");
  EXPECT_NE(refusal([](auto &ranks, auto &) { ranks[1].graph.tasks[2].waits.clear(); })
                .find("rank 1 does not validate"),
            std::string::npos);
}
// The ranks refuse what one rank refuses, in its words: a token outside the
// vocabulary, a run past the context (maxContext 40), and nothing runs.
TEST_P(TensorParallelTest, RefusesWhatOneRankRefuses) {
  mk::TensorParallelExecutor many(compiled->ranks, weights, options(0));
  mk::CpuExecutor one(compiled->tasks, compiled->schedule, weights, options(0));
  auto refusal = [](const std::function<void()> &run) -> std::string {
    try {
      run();
    } catch (const mk::ExecutionError &error) {
      return error.what();
    }
    return "";
  };
  std::string vocabulary = refusal([&] { many.step(1 << 20); });
  EXPECT_NE(vocabulary.find("token 1048576 is outside the vocabulary of"), std::string::npos)
      << vocabulary;
  EXPECT_EQ(vocabulary, refusal([&] { one.step(1 << 20); }));
  std::string full = refusal([&] { many.generate({3, 17, 5}, 39); });
  EXPECT_NE(full.find("the context is full: 41 more steps from position 0 pass maxContext 40"),
            std::string::npos)
      << full;
  EXPECT_EQ(many.position(), 0);
  EXPECT_NO_THROW(many.step(3));
}

INSTANTIATE_TEST_SUITE_P(Shapes, TensorParallelTest, ::testing::ValuesIn(tpCases()),
                         [](const auto &info) { return info.param.name; });

TEST(TensorParallel, RefusesHeadsThatDoNotDivide) {
  ModelShape shape;
  shape.heads = 6;
  shape.kvHeads = 3;
  mlir::MLIRContext context;
  mk::CompileOptions options;
  options.maxContext = 16;
  options.tensorParallel = 2;
  auto model = mk::test::compileShape(context, shape, options);
  ASSERT_FALSE(bool(model));
  std::string message = llvm::toString(model.takeError());
  EXPECT_NE(message.find("'layer0.attention' has 3 KV heads, which do not divide among 2 ranks"),
            std::string::npos)
      << message;
}

} // namespace
