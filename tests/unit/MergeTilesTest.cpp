// The attention merge's tiles (core/protocol/AttentionLayout.h): queued
// merges take at most MK_MERGE_TILE_ELEMENTS of one q head's dimensions, an
// inline merge its KV head's q heads whole. The CPU executor merges each
// element alone, in f64 and chunk order, so the two tilings must give the
// same bits; the lowering must cut heads of any size so.
#include "CompileShape.h"
#include "compiler/driver/RandomWeights.h"
#include "core/protocol/AttentionLayout.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

namespace {

struct MergeCase {
  const char *name;
  int64_t heads, kvHeads, headDim;
  uint64_t tilesPerHead; // queued merge tiles a q head
};

std::vector<const mk::Task *> mergesOf(const mk::TaskGraph &graph, const std::string &op) {
  std::vector<const mk::Task *> merges;
  for (const mk::Task &task : graph.tasks)
    if (task.kind == mk::TaskKind::AttentionMerge && graph.operations[task.op].name == op)
      merges.push_back(&task);
  return merges;
}

TEST(MergeTiles, AQueuedMergeTakesPartOfOneHeadAndTheBitsStay) {
  for (MergeCase c : {MergeCase{"group 6, heads of 128", 12, 2, 128, 2},
                      MergeCase{"group 3, heads of 64", 9, 3, 64, 1},
                      MergeCase{"MHA, heads of 96", 2, 2, 96, 2},
                      MergeCase{"group 2, heads of 16", 4, 2, 16, 1}}) {
    SCOPED_TRACE(c.name);
    mk::test::ModelShape shape;
    shape.heads = c.heads;
    shape.kvHeads = c.kvHeads;
    shape.headDim = c.headDim;
    shape.hidden = 64;
    shape.layers = 1;
    mlir::MLIRContext queuedContext, inlineContext;
    mk::CompileOptions options;
    options.maxContext = 96;
    options.target.numSms = 16;
    options.target.oProjByHead = mk::TargetDescription::ByHead::Off; // queued merges
    auto queued = mk::test::compileShape(queuedContext, shape, options);
    ASSERT_TRUE(bool(queued)) << llvm::toString(queued.takeError());
    options.target.inlineMerge = true;
    auto inlined = mk::test::compileShape(inlineContext, shape, options);
    ASSERT_TRUE(bool(inlined)) << llvm::toString(inlined.takeError());

    const uint64_t headLength = c.headDim, groupLength = c.heads / c.kvHeads * c.headDim;
    auto merges = mergesOf(queued->tasks, "layer0.attention");
    ASSERT_EQ(merges.size(), c.heads * c.tilesPerHead);
    for (const mk::Task *merge : merges) {
      EXPECT_EQ(merge->begin / headLength, (merge->end - 1) / headLength) << "one head a tile";
      EXPECT_LE(merge->end - merge->begin, uint64_t(MK_MERGE_TILE_ELEMENTS));
    }
    auto whole = mergesOf(inlined->tasks, "layer0.attention");
    ASSERT_EQ(whole.size(), static_cast<size_t>(c.kvHeads));
    for (const mk::Task *merge : whole)
      EXPECT_EQ(merge->end - merge->begin, groupLength) << "a KV head's q heads";

    mk::WeightTable weights = mk::randomWeights(queued->tasks, 20261205);
    mk::CpuExecutor fromTiles(queued->tasks, queued->schedule, weights, {.checked = true});
    mk::CpuExecutor fromGroups(inlined->tasks, inlined->schedule, weights, {.checked = true});
    for (int64_t token : {3, 14, 15, 92, 65, 35, 89, 79})
      ASSERT_EQ(fromTiles.step(token), fromGroups.step(token)) << "token " << token;
  }
}

} // namespace
