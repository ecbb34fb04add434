// Every wait of a real compiled model, removed one at a time: the validator
// refuses the schedule, or the wait was implied by others (the reader already
// waits, through some chain, for every writer of what it reads) and the
// checked executor, run with adversarial SM orders, computes exactly the bits
// of the intact schedule. A missing dependency can never pass silently.
#include "compiler/driver/Pipeline.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"
#include "core/validator/Validator.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

const std::vector<int64_t> kTokens = {5, 17, 42, 3, 99, 1};

std::vector<float> runChecked(const mk::CompiledModel &model, const mk::TaskGraph &graph,
                              uint64_t seed) {
  mk::CpuExecutorOptions options;
  options.threaded = false;
  options.checked = true;
  options.adversarialSeed = seed;
  options.validateDataflow = false;
  mk::CpuExecutor executor(graph, model.schedule, model.imported.weights, options);
  std::vector<float> all;
  for (int64_t token : kTokens) {
    std::vector<float> logits = executor.step(token);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

class FixtureDependencyTest : public ::testing::TestWithParam<const char *> {};

// A fixture compiled for 24 positions on 5 SMs; `fuseMlp`, `mergeInOProj`,
// `oProjByHead`: those target options.
llvm::Expected<mk::CompiledModel> compileFixture(mlir::MLIRContext &context, const char *fixture,
                                                 bool fuseMlp, bool mergeInOProj,
                                                 bool oProjByHead = false) {
  mk::CompileOptions options;
  options.maxContext = 24;
  options.target.numSms = 5;
  options.target.fuseMlp = fuseMlp;
  options.target.mergeInOProj = mergeInOProj;
  options.target.oProjByHead =
      oProjByHead ? mk::TargetDescription::ByHead::On : mk::TargetDescription::ByHead::Off;
  return mk::compileToSchedule(context, std::string(MKC_FIXTURES_DIR) + "/" + fixture, options);
}

// `fuseMlp`: with Mlp operations, whose slices add into an output that
// o_proj seeds and the next layer reads (their own rules in the validator).
// `mergeInOProj`: o_proj merges the chunks' partials, no merge tasks.
// `oProjByHead`: o_proj's tiles each merge one head and add into an output
// that the embedding or the previous down seeds.
void checkEveryRemovedWait(const char *fixture, bool fuseMlp, bool mergeInOProj = false,
                           bool oProjByHead = false) {
  mlir::MLIRContext context;
  auto compiled = compileFixture(context, fixture, fuseMlp, mergeInOProj, oProjByHead);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  std::vector<float> intact = runChecked(*compiled, compiled->tasks, 0);

  size_t waits = 0, refused = 0;
  for (const mk::Task &task : compiled->tasks.tasks) {
    for (size_t wait = 0; wait < task.waits.size(); ++wait, ++waits) {
      mk::TaskGraph graph = compiled->tasks;
      auto &taskWaits = graph.tasks[task.id].waits;
      taskWaits.erase(taskWaits.begin() + wait);
      if (!mk::validateSchedule(graph, compiled->schedule).empty()) {
        ++refused;
        continue;
      }
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        std::vector<float> logits;
        try {
          logits = runChecked(*compiled, graph, seed);
        } catch (const mk::ExecutionError &error) {
          ADD_FAILURE() << "the validator accepted a schedule without wait " << wait
                        << " of task " << task.id << ", and it races: " << error.what();
          continue;
        }
        ASSERT_EQ(logits.size(), intact.size());
        EXPECT_EQ(std::memcmp(logits.data(), intact.data(), logits.size() * sizeof(float)), 0)
            << "without wait " << wait << " of task " << task.id << ": different logits";
      }
    }
  }
  EXPECT_GT(refused, 0u);
  std::printf("%s%s%s%s: %zu waits, %zu refused by the validator, %zu implied by others\n",
              fixture, fuseMlp ? " (--fuse-mlp)" : "", mergeInOProj ? " (--merge-in-o-proj)" : "",
              oProjByHead ? " (--o-proj-by-head)" : "", waits, refused, waits - refused);
}

TEST_P(FixtureDependencyTest, EveryRemovedWaitIsRefusedOrImplied) {
  checkEveryRemovedWait(GetParam(), false);
}

TEST_P(FixtureDependencyTest, EveryRemovedWaitOfFusedMlpsIsRefusedOrImplied) {
  checkEveryRemovedWait(GetParam(), true);
}

TEST_P(FixtureDependencyTest, EveryRemovedWaitOfMergesInOProjIsRefusedOrImplied) {
  checkEveryRemovedWait(GetParam(), false, true);
}

TEST_P(FixtureDependencyTest, EveryRemovedWaitOfOProjByHeadIsRefusedOrImplied) {
  checkEveryRemovedWait(GetParam(), false, false, true);
}

// What the validator refuses of o_proj cut by head: its output kept in f32,
// no seed before the additions, a head's rows not all added, a row tile
// among its head tiles, a head tile of a Gemv that does not project by
// head.
TEST(OProjByHeadValidation, RefusesBrokenHeadTiles) {
  mlir::MLIRContext context;
  auto compiled = compileFixture(context, "llama3_ts17.onnx", false, false, true);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  const mk::TaskGraph &intact = compiled->tasks;
  ASSERT_EQ(mk::validateSchedule(intact, compiled->schedule), "");
  uint32_t oProj = 0, embed = 0, headTask = 0, qkv = 0;
  size_t headTasks = 0;
  for (uint32_t op = 0; op < intact.operations.size(); ++op) {
    const mk::Operation &operation = intact.operations[op];
    if (mk::projectsByHead(operation) && oProj == 0)
      oProj = op;
    if (operation.kind == mk::OpKind::Embed)
      embed = op;
    if (operation.name == "layer0.qkv")
      qkv = op;
  }
  ASSERT_TRUE(mk::projectsByHead(intact.operations[oProj]));
  ASSERT_NE(intact.operations[embed].seed, mk::kNoBuffer);
  for (const mk::Task &task : intact.tasks) {
    EXPECT_NE(task.kind, mk::TaskKind::AttentionMerge);
    if (task.kind == mk::TaskKind::HeadProjection && task.op == oProj && headTasks++ == 0)
      headTask = task.id;
  }
  const mk::Operation &op = intact.operations[oProj];
  EXPECT_EQ(headTasks, uint64_t(op.numHeads) * ((op.outputLength + op.sliceWidth - 1) /
                                                op.sliceWidth));

  auto refusal = [&](auto edit) {
    mk::TaskGraph graph = intact;
    edit(graph);
    return mk::validateSchedule(graph, compiled->schedule);
  };
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.buffers[g.operations[oProj].output].element = mk::BufferElement::F32;
            }).find("which is not fixed64"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) { g.operations[embed].seed = mk::kNoBuffer; }), "");
  // The first tile one row shorter, its footprint as its kind derives it.
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              mk::Task &task = g.tasks[headTask];
              --task.end;
              task.accumulates = mk::describeKind(task.kind)
                                     .footprint(g, g.operations[task.op], task)
                                     .accumulates;
              task.weightBytes -= 2 * uint64_t(g.operations[task.op].headDim);
            }).find("once each in order"),
            std::string::npos);
  std::string rowTile = refusal([&](mk::TaskGraph &g) { g.tasks[headTask].kind = mk::TaskKind::Gemv; });
  // (Its head then misses rows: the operation check finds that first.)
  EXPECT_NE(rowTile.find("HeadProjection tiles"), std::string::npos) << rowTile;
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              for (mk::Task &task : g.tasks)
                if (task.op == qkv) {
                  task.kind = mk::TaskKind::HeadProjection;
                  break;
                }
            }).find("does not project by head"),
            std::string::npos);
}

// What the validator refuses of an attention merged by its reader: another
// operation reading its partials as a plain vector, a merging Gemv whose
// geometry is not its attention's, or whose input is no merged partials.
TEST(MergeInOProjValidation, RefusesBrokenReaders) {
  mlir::MLIRContext context;
  auto compiled = compileFixture(context, "llama3_ts17.onnx", false, true);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  const mk::TaskGraph &intact = compiled->tasks;
  ASSERT_EQ(mk::validateSchedule(intact, compiled->schedule), "");
  uint32_t attention = 0, oProj = 0, down = 0;
  for (uint32_t op = 0; op < intact.operations.size(); ++op) {
    const mk::Operation &operation = intact.operations[op];
    if (mk::mergedByReader(operation) && attention == 0)
      attention = op;
    if (mk::mergesAttention(operation) && oProj == 0)
      oProj = op;
    if (operation.name == "layer0.down")
      down = op;
  }
  ASSERT_TRUE(mk::mergedByReader(intact.operations[attention]));
  ASSERT_EQ(intact.operations[oProj].input, intact.operations[attention].partials);
  for (const mk::Task &task : intact.tasks)
    EXPECT_NE(task.kind, mk::TaskKind::AttentionMerge);

  auto refusal = [&](auto edit) {
    mk::TaskGraph graph = intact;
    edit(graph);
    return mk::validateSchedule(graph, compiled->schedule);
  };
  EXPECT_NE(refusal([&](mk::TaskGraph &g) { g.operations[oProj].numHeads = 0; })
                .find("reads its partials as a plain vector"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) { g.operations[oProj].numChunks += 1; })
                .find("heads, chunks or window other than that attention's"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.operations[down].residual = g.operations[attention].partials;
            }).find("reads its partials as a plain vector"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.operations[down].numHeads = g.operations[oProj].numHeads;
            }).find("not the partials of an attention merged by its reader"),
            std::string::npos);
}

// What the validator refuses of a fused graph beyond its waits: an addition
// into an f32 buffer, an output nobody seeds, a task declaring other
// additions than its kind's, a Gemv writing a fixed64 buffer as f32.
TEST(FusedMlpValidation, RefusesBrokenAdditions) {
  mlir::MLIRContext context;
  auto compiled = compileFixture(context, "llama3_ts17.onnx", true, false);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  const mk::TaskGraph &intact = compiled->tasks;
  ASSERT_EQ(mk::validateSchedule(intact, compiled->schedule), "");
  uint32_t mlp = 0, seeder = 0, mlpTask = 0;
  for (uint32_t op = 0; op < intact.operations.size(); ++op) {
    if (intact.operations[op].kind == mk::OpKind::Mlp)
      mlp = op;
    if (intact.operations[op].seed != mk::kNoBuffer)
      seeder = op;
  }
  for (const mk::Task &task : intact.tasks)
    if (task.op == mlp)
      mlpTask = task.id;
  ASSERT_EQ(intact.operations[seeder].seed, intact.operations[mlp].output);

  auto refusal = [&](auto edit) {
    mk::TaskGraph graph = intact;
    edit(graph);
    return mk::validateSchedule(graph, compiled->schedule);
  };
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.buffers[g.operations[mlp].output].element = mk::BufferElement::F32;
            }).find("not fixed64"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.operations[seeder].seed = mk::kNoBuffer;
              for (mk::Task &task : g.tasks)
                if (task.op == seeder)
                  task.writes = mk::deriveFootprint(g, task).writes;
            }).find("no task writes"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) { g.tasks[mlpTask].accumulates.clear(); })
                .find("declares that it adds into nothing"),
            std::string::npos);
  EXPECT_NE(refusal([&](mk::TaskGraph &g) {
              g.buffers[g.operations[seeder].output].element = mk::BufferElement::Fixed64;
            }).find("fixed64"),
            std::string::npos);
  // A seeder whose output names no buffer: refused by name, read nowhere.
  EXPECT_NE(refusal([&](mk::TaskGraph &g) { g.operations[seeder].output = 999999; })
                .find("out of range"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureDependencyTest,
                         ::testing::Values("llama3_ts17.onnx", "qwen3_dynamo23.onnx"));

} // namespace
