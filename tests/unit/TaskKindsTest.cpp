// The task kind descriptions (core/taskgraph/TaskKind.h) against what they
// promise: one per opcode, phases that end on the operation's output event,
// footprints equal to the hand-declared accesses of the toy graph, variants
// that cover every task; and the event threshold of core/protocol/.
#include "ToyTaskGraph.h"

#include "core/protocol/AttentionLayout.h"
#include "core/protocol/EventProtocol.h"
#include "core/taskgraph/KernelVariants.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/TaskNames.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

namespace mk {
namespace {

TEST(TaskKindsTest, OneDescriptionPerOpcode) {
  std::set<std::string> names;
  for (size_t opcode = 0; opcode < kNumTaskKinds; ++opcode) {
    TaskKind kind = static_cast<TaskKind>(opcode);
    ASSERT_TRUE(isTaskKind(kind));
    const TaskKindDescription &description = describeKind(kind);
    EXPECT_EQ(description.kind, kind) << opcode;
    EXPECT_TRUE(names.insert(description.name).second) << description.name;
    EXPECT_NE(description.deviceFunction, nullptr);
    EXPECT_NE(description.sharedFloatsFunction, nullptr);
  }
  EXPECT_FALSE(isTaskKind(static_cast<TaskKind>(kNumTaskKinds)));
  EXPECT_EQ(taskKindName(static_cast<TaskKind>(kNumTaskKinds)), std::string("unknown task kind"));
}

// The kinds of one operation are its phases, in opcode order: every phase
// but the last triggers an event of its own, the last the output's. A
// Gemv's two kinds are alternatives, never phases of one operation: a Gemv
// projecting by head has HeadProjection tiles only, any other Gemv tiles.
TEST(TaskKindsTest, PhasesEndOnTheOutputEvent) {
  for (OpKind op :
       {OpKind::Embed, OpKind::Gemv, OpKind::Attention, OpKind::Argmax, OpKind::AllReduce,
        OpKind::Mlp}) {
    std::vector<const TaskKindDescription *> phases;
    for (size_t opcode = 0; opcode < kNumTaskKinds; ++opcode)
      if (describeKind(static_cast<TaskKind>(opcode)).operation == op)
        phases.push_back(&describeKind(static_cast<TaskKind>(opcode)));
    ASSERT_FALSE(phases.empty()) << opKindName(op);
    if (op == OpKind::Gemv) {
      ASSERT_EQ(phases.size(), 2u);
      EXPECT_EQ(phases[0]->kind, TaskKind::Gemv);
      EXPECT_EQ(phases[1]->kind, TaskKind::HeadProjection);
      for (const TaskKindDescription *alternative : phases)
        EXPECT_EQ(alternative->phaseEvent, nullptr) << alternative->name;
      continue;
    }
    for (size_t i = 0; i + 1 < phases.size(); ++i)
      EXPECT_NE(phases[i]->phaseEvent, nullptr) << phases[i]->name;
    EXPECT_EQ(phases.back()->phaseEvent, nullptr) << phases.back()->name;
  }
}

// The toy graph declares every task's reads and writes by hand
// (ToyTaskGraph.cpp): the descriptions must derive exactly those.
TEST(TaskKindsTest, FootprintsAreTheToyGraphsDeclaredAccesses) {
  toy::ToyModel model = toy::buildToyModel();
  std::set<TaskKind> seen;
  for (const Task &task : model.graph.tasks) {
    TaskFootprint derived = deriveFootprint(model.graph, task);
    EXPECT_EQ(normalizeRanges(derived.reads), normalizeRanges(task.reads))
        << describeTask(model.graph, task.id);
    EXPECT_EQ(normalizeRanges(derived.writes), normalizeRanges(task.writes))
        << describeTask(model.graph, task.id);
    seen.insert(task.kind);
  }
  // Every kind but three, each with its own test below: the AllReduce of
  // tensor parallelism, the Mlp of `--fuse-mlp` and the HeadProjection of
  // `--o-proj-by-head`.
  EXPECT_EQ(seen.size(), kNumTaskKinds - 3) << "the toy graph holds every other kind";
  EXPECT_FALSE(seen.count(TaskKind::AllReduce));
  EXPECT_FALSE(seen.count(TaskKind::Mlp));
  EXPECT_FALSE(seen.count(TaskKind::HeadProjection));
}

// An AllReduce tile reads its rows of the partial sums and of the residual,
// writes its rows of the output, each row of the step, and reads the same
// rows of the partial sums on the other ranks (its peer reads).
TEST(TaskKindsTest, AnAllReduceReadsItsRowsOnEveryRank) {
  TaskGraph graph;
  graph.maxContext = 4;
  graph.rows = 2;
  graph.ranks = 2;
  graph.buffers = {{"token", BufferKind::Token, 2},
                   {"partial", BufferKind::Activation, 2 * 10},
                   {"residual", BufferKind::Activation, 2 * 10},
                   {"out", BufferKind::Activation, 2 * 10}};
  Operation reduce;
  reduce.kind = OpKind::AllReduce;
  reduce.input = 1;
  reduce.residual = 2;
  reduce.output = 3;
  reduce.inputLength = reduce.outputLength = 10;
  graph.operations = {reduce};
  Task task;
  task.kind = TaskKind::AllReduce;
  task.begin = 3;
  task.end = 7;
  TaskFootprint footprint = deriveFootprint(graph, task);
  std::vector<BufferRange> reads = {{1, 3, 7}, {1, 13, 17}, {2, 3, 7}, {2, 13, 17}};
  EXPECT_EQ(normalizeRanges(footprint.reads), normalizeRanges(reads));
  EXPECT_EQ(normalizeRanges(footprint.writes),
            normalizeRanges({{3, 3, 7}, {3, 13, 17}}));
  EXPECT_EQ(normalizeRanges(footprint.peerReads),
            normalizeRanges({{1, 3, 7}, {1, 13, 17}}));
  EXPECT_EQ(describeKind(TaskKind::AllReduce).weightElements(reduce, task), 0u);
}

// An Mlp slice reads the whole input of each row and adds into the whole
// output of each row; it streams its channels' rows of gate and up, their
// columns of down and the norm.
TEST(TaskKindsTest, AnMlpSliceAddsIntoEveryOutputRow) {
  TaskGraph graph;
  graph.maxContext = 4;
  graph.rows = 2;
  graph.buffers = {{"token", BufferKind::Token, 2},
                   {"in", BufferKind::Activation, 2 * 10},
                   {"out", BufferKind::Activation, 2 * 12, BufferElement::Fixed64}};
  Operation mlp;
  mlp.kind = OpKind::Mlp;
  mlp.input = 1;
  mlp.output = 2;
  mlp.inputLength = 10;
  mlp.outputLength = 12;
  mlp.weights = {{"gate", 32, 10}, {"up", 32, 10}, {"down", 12, 32}};
  mlp.norm = {"norm", 10, 1};
  mlp.sliceWidth = 16;
  graph.operations = {mlp};
  Task task;
  task.kind = TaskKind::Mlp;
  task.begin = 16;
  task.end = 32;
  const TaskKindDescription &kind = describeKind(TaskKind::Mlp);
  EXPECT_EQ(kind.checkTile(mlp, task), "");
  TaskFootprint footprint = deriveFootprint(graph, task);
  EXPECT_EQ(normalizeRanges(footprint.reads), normalizeRanges({{1, 0, 10}, {1, 10, 20}}));
  EXPECT_TRUE(footprint.writes.empty());
  EXPECT_EQ(normalizeRanges(footprint.accumulates), normalizeRanges({{2, 0, 12}, {2, 12, 24}}));
  EXPECT_EQ(kind.weightElements(mlp, task), 16u * (2 * 10 + 12) + 10);
  task.begin = 20; // not whole 16-byte units of a down row
  EXPECT_NE(kind.checkTile(mlp, task), "");
  task.begin = 8; // wider than the slice
  EXPECT_NE(kind.checkTile(mlp, task), "");
}

// A HeadProjection tile reads its head's partials (every chunk) and adds
// into its rows of the output; it streams its rows of the head's columns.
// Its head sits above MK_HEAD_TILE_ROW_BITS of begin and end.
TEST(TaskKindsTest, AHeadProjectionAddsIntoItsRows) {
  TaskGraph graph;
  graph.maxContext = 8;
  const uint64_t heads = 4, headDim = 8, chunks = 2, partialLength = headDim + 2;
  graph.buffers = {{"token", BufferKind::Token, 1},
                   {"partials", BufferKind::Scratch, heads * chunks * partialLength},
                   {"out", BufferKind::Activation, 12, BufferElement::Fixed64}};
  Operation oProj;
  oProj.kind = OpKind::Gemv;
  oProj.input = 1;
  oProj.output = 2;
  oProj.inputLength = heads * headDim;
  oProj.outputLength = 12;
  oProj.weights = {{"o", 12, heads * headDim}};
  setAttentionGeometry(oProj, {.numHeads = 4, .numKvHeads = 2, .headDim = 8, .chunkSize = 4,
                               .numChunks = 2, .chunksPerRound = 2, .window = 0});
  oProj.sliceWidth = 5;
  ASSERT_TRUE(projectsByHead(oProj));
  graph.operations = {oProj};
  Task task;
  task.kind = TaskKind::HeadProjection;
  task.begin = uint64_t(2) << MK_HEAD_TILE_ROW_BITS | 5;
  task.end = uint64_t(2) << MK_HEAD_TILE_ROW_BITS | 10;
  const TaskKindDescription &kind = describeKind(TaskKind::HeadProjection);
  EXPECT_EQ(kind.checkTile(oProj, task), "");
  EXPECT_EQ(kind.describeTile(task), "q head 2, rows [5, 10)");
  TaskFootprint footprint = deriveFootprint(graph, task);
  EXPECT_EQ(normalizeRanges(footprint.reads),
            normalizeRanges({{1, 2 * chunks * partialLength, 3 * chunks * partialLength}}));
  EXPECT_TRUE(footprint.writes.empty());
  EXPECT_EQ(normalizeRanges(footprint.accumulates), normalizeRanges({{2, 5, 10}}));
  EXPECT_EQ(kind.weightElements(oProj, task), 5u * headDim);
  task.end = uint64_t(3) << MK_HEAD_TILE_ROW_BITS | 10; // two heads
  EXPECT_NE(kind.checkTile(oProj, task), "");
  task.begin = uint64_t(4) << MK_HEAD_TILE_ROW_BITS | 0; // past the heads
  task.end = uint64_t(4) << MK_HEAD_TILE_ROW_BITS | 5;
  EXPECT_NE(kind.checkTile(oProj, task), "");
  task.begin = 0; // wider than the slice
  task.end = 6;
  EXPECT_NE(kind.checkTile(oProj, task), "");
  oProj.sliceWidth = 0; // a Gemv that does not project by head
  task.end = 5;
  EXPECT_NE(kind.checkTile(oProj, task), "");
}

TEST(TaskKindsTest, VariantsCoverEveryTask) {
  toy::ToyModel model = toy::buildToyModel();
  KernelVariants variants = listKernelVariants(model.graph);
  ASSERT_EQ(variants.ofTask.size(), model.graph.tasks.size());
  for (const Task &task : model.graph.tasks) {
    ASSERT_LT(variants.ofTask[task.id], variants.variants.size());
    const KernelVariant &variant = variants.variants[variants.ofTask[task.id]];
    const TaskKindDescription &kind = describeKind(task.kind);
    EXPECT_EQ(variant.kind, task.kind);
    EXPECT_EQ(variant.arguments, kind.variantArguments(model.graph, model.graph.operations[task.op]));
    EXPECT_EQ(variant.arguments.size(), kind.variantParameters.size()) << kind.name;
  }
  for (size_t i = 1; i < variants.variants.size(); ++i) {
    const KernelVariant &a = variants.variants[i - 1], &b = variants.variants[i];
    EXPECT_TRUE(std::tie(a.kind, a.arguments) < std::tie(b.kind, b.arguments))
        << "variants are unique and numbered in order";
  }
  // The toy's two layers rotate differently: two AttentionChunk variants.
  size_t chunks = 0;
  for (const KernelVariant &variant : variants.variants)
    chunks += variant.kind == TaskKind::AttentionChunk;
  EXPECT_EQ(chunks, 2u);
  EXPECT_EQ(describeVariant(TaskKind::Gemv, {16, 1, 1, 0}),
            "Gemv(input 16, epilogue MK_EPILOGUE_SILU_MUL, norm true, bias false)");
}

TEST(TaskKindsTest, EventThreshold) {
  EXPECT_EQ(mk_event_threshold(3, 0, 0), 3u);
  EXPECT_EQ(mk_event_threshold(3, 0, -1), 0u); // the previous step of step 0: nothing
  EXPECT_EQ(mk_event_threshold(3, 5, -1), 15u);
  EXPECT_EQ(mk_event_threshold(132, 32767, 0), 132u * 32768u);
}

} // namespace
} // namespace mk
