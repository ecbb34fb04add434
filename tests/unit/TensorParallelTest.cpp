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
#include "codegen/Megakernel.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/ControlBlock.h"
#include "runtime/format/RankKernel.h"
#include "runtime/format/ScheduleBlobBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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
  EXPECT_TRUE(loaded->artifact.rankKernel.cubin.empty()) << "none was given";

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
// The kernel's view of a rank (runtime/format/ScheduleBlob.h): the blob
// says how many ranks, which waits read every rank's counter, and which
// tasks release their event to the other GPUs: exactly those whose event
// some allRanks wait reads. An AllReduce's record carries its residual.
TEST_P(TensorParallelTest, TheBlobMarksWhatCrossesRanks) {
  const TpCase &c = GetParam();
  const mk::ScheduledGraph &rank = compiled->ranks[1];
  std::string error;
  auto built = mk::buildArtifact(rank.graph, rank.schedule, weights, {}, error);
  ASSERT_NE(built, nullptr) << error;
  const std::vector<uint8_t> &blob = built->artifact.scheduleBlob;
  MkBlobHeader header = mk::readBlobHeader(blob);
  EXPECT_EQ(header.ranks, static_cast<uint32_t>(c.ranks));
  auto records = [&](auto type, uint64_t offset, size_t count) {
    std::vector<decltype(type)> out(count);
    std::memcpy(out.data(), blob.data() + offset, count * sizeof(decltype(type)));
    return out;
  };
  auto tasks = records(MkTaskRecord{}, header.tasksOffset, header.numTasks);
  auto waits = records(MkWaitRecord{}, header.waitsOffset, header.numWaits);
  auto operations = records(MkOperationRecord{}, header.operationsOffset, header.numOperations);
  std::vector<bool> awaitedByRanks(rank.graph.events.size(), false);
  size_t crossing = 0;
  for (const mk::Task &task : rank.graph.tasks) {
    const MkTaskRecord &record = tasks[task.id];
    for (size_t w = 0; w < task.waits.size(); ++w) {
      EXPECT_EQ(waits[record.firstWait + w].allRanks, task.waits[w].allRanks ? 1u : 0u);
      if (task.waits[w].allRanks) {
        awaitedByRanks[task.waits[w].event] = true;
        ++crossing;
      }
    }
  }
  EXPECT_GT(crossing, 0u);
  size_t releasing = 0;
  for (const mk::Task &task : rank.graph.tasks) {
    bool flagged = (tasks[task.id].flags & MK_TASK_RELEASES_TO_RANKS) != 0;
    EXPECT_EQ(flagged, bool(awaitedByRanks[task.trigger])) << "task " << task.id;
    releasing += flagged;
  }
  EXPECT_GT(releasing, 0u);
  EXPECT_LT(releasing, rank.graph.tasks.size()) << "only what another rank waits for";
  for (size_t i = 0; i < rank.graph.operations.size(); ++i)
    if (rank.graph.operations[i].kind == mk::OpKind::AllReduce)
      EXPECT_NE(operations[i].residual, MK_NO_OFFSET) << rank.graph.operations[i].name;
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

// RANKKERNEL: the ranks' kernel and the NCCL it was linked with, kept byte
// for byte; a kernel that is no CUBIN, names no NCCL, or comes without
// ranks is refused, as is a section too short for its header.
TEST(TensorParallel, TheMkCarriesTheRanksKernel) {
  mlir::MLIRContext context;
  mk::CompileOptions options;
  options.maxContext = 16;
  options.tensorParallel = 2;
  auto model = mk::test::compileShape(context, {}, options);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  mk::WeightTable weights = mk::randomWeights(model->tasks, 7);
  mk::addWeightSlices(weights, model->weightSlices);
  mk::RankKernel kernel{22809, {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 42}};
  mk::ArtifactOptions artifactOptions;
  artifactOptions.ranks = model->ranks;
  artifactOptions.weightSlices = model->weightSlices;
  artifactOptions.rankKernel = kernel;
  artifactOptions.compilerVersion = "mkc 0.1.0";
  std::string error;
  auto built = mk::buildArtifact(model->tasks, model->schedule, weights, artifactOptions, error);
  ASSERT_NE(built, nullptr) << error;
  std::string path = ::testing::TempDir() + "/tensor-parallel-kernel.mk";
  ASSERT_TRUE(mk::writeArtifact(path, built->artifact, error)) << error;
  auto loaded = mk::loadArtifact(path, error);
  ASSERT_NE(loaded, nullptr) << error;
  EXPECT_EQ(loaded->artifact.rankKernel.ncclVersion, 22809u);
  EXPECT_EQ(loaded->artifact.rankKernel.cubin, kernel.cubin);

  // What rank 1's GPU loads: its graph, the kernel, its slices packed and
  // its blob; every weight it names holds the values the CPU's slices give.
  auto ranked = mk::rankArtifact(loaded->artifact, 1, error);
  ASSERT_NE(ranked, nullptr) << error;
  const mk::Artifact &rank = ranked->artifact;
  EXPECT_EQ(rank.graph.rank, 1);
  EXPECT_EQ(rank.cubin, kernel.cubin);
  EXPECT_EQ(mk::readBlobHeader(rank.scheduleBlob).ranks, 2u);
  mk::WeightTable expected = mk::viewWeights(loaded->artifact.weights, loaded->artifact.weightData);
  mk::addWeightSlices(expected, loaded->artifact.weightSlices);
  ASSERT_FALSE(rank.weights.empty());
  for (const mk::WeightEntry &entry : rank.weights) {
    const mk::Weight *weight = expected.find(entry.name);
    ASSERT_NE(weight, nullptr) << entry.name;
    EXPECT_EQ(mk::unpackWeight(entry, rank.weightData), weight->allValues()) << entry.name;
  }
  EXPECT_EQ(mk::rankArtifact(loaded->artifact, 2, error), nullptr);
  EXPECT_NE(error.find("no kernel of ranks"), std::string::npos) << error;

  EXPECT_EQ(mk::checkRankKernel(model->ranks, kernel), "");
  EXPECT_EQ(mk::checkRankKernel({}, {}), "");
  EXPECT_NE(mk::checkRankKernel({}, kernel).find("no RANKS section"), std::string::npos);
  mk::RankKernel noElf{22809, {1, 2, 3, 4}}, noNccl{0, kernel.cubin};
  EXPECT_NE(mk::checkRankKernel(model->ranks, noElf).find("not a CUBIN"), std::string::npos);
  EXPECT_NE(mk::checkRankKernel(model->ranks, noNccl).find("no NCCL version"), std::string::npos);
  mk::RankKernel decoded;
  std::vector<uint8_t> bytes = mk::encodeRankKernel(kernel);
  EXPECT_EQ(mk::decodeRankKernel(bytes, decoded), "");
  EXPECT_EQ(decoded.cubin, kernel.cubin);
  EXPECT_NE(mk::decodeRankKernel(std::span(bytes).first(5), decoded).find("needs 8 bytes"),
            std::string::npos);
  bytes[5] = 1;
  EXPECT_NE(mk::decodeRankKernel(bytes, decoded).find("bytes 4-7 must be 0"), std::string::npos);
  artifactOptions.ranks.clear();
  artifactOptions.weightSlices.clear();
  EXPECT_EQ(mk::buildArtifact(model->tasks, model->schedule, weights, artifactOptions, error),
            nullptr);
  EXPECT_NE(error.find("no RANKS section"), std::string::npos) << error;
}

// The kernel runs up to MK_MAX_RANKS ranks, and a rank's graph one row a
// step; its source says how many ranks and instantiates the AllReduce.
TEST(TensorParallel, TheKernelTakesUpToEightRanks) {
  ModelShape shape;
  shape.heads = shape.kvHeads = 16;
  shape.headDim = 4;
  shape.intermediate = 160;
  mlir::MLIRContext context;
  for (int64_t ranks : {2, 16}) {
    mk::CompileOptions options;
    options.maxContext = 16;
    options.tensorParallel = ranks;
    auto model = mk::test::compileShape(context, shape, options);
    ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
    auto source = mk::megakernelSource(model->ranks[1].graph, model->ranks[1].schedule);
    if (ranks <= MK_MAX_RANKS) {
      ASSERT_TRUE(bool(source)) << llvm::toString(source.takeError());
      EXPECT_NE(source->find("#define MK_RANKS 2"), std::string::npos);
      EXPECT_NE(source->find("allReduceTask<"), std::string::npos);
      continue;
    }
    ASSERT_FALSE(bool(source));
    std::string message = llvm::toString(source.takeError());
    EXPECT_NE(message.find("rank 1 of 16 of tensor parallelism; the kernel runs 1 to 8 ranks"),
              std::string::npos)
        << message;
  }
}

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
