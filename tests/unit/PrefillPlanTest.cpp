// The plan of a prompt run layer by layer on the GPU (runtime/gpu/
// PrefillPlan.h), on the toy graph: which operations run, and that no two
// buffers alive at once share arena space.
#include "ToyTaskGraph.h"
#include "runtime/gpu/PrefillPlan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace mk {
namespace {

bool runs(const PrefillPlan &plan, const TaskGraph &graph, OpKind kind) {
  return std::any_of(plan.operations.begin(), plan.operations.end(),
                     [&](uint32_t op) { return graph.operations[op].kind == kind; });
}

// The step (index into plan.operations) that writes `buffer`, and the last
// that reads it.
std::pair<size_t, size_t> lifetime(const PrefillPlan &plan, const TaskGraph &graph,
                                   uint32_t buffer) {
  size_t written = plan.operations.size(), lastRead = 0;
  for (size_t step = 0; step < plan.operations.size(); ++step) {
    const Operation &op = graph.operations[plan.operations[step]];
    if (op.output == buffer && written == plan.operations.size())
      written = step;
    bool reads = (op.kind != OpKind::Embed && op.input == buffer) ||
                 (op.epilogue == Epilogue::Residual && op.residual == buffer);
    if (reads)
      lastRead = std::max(lastRead, step);
  }
  return {written, std::max(lastRead, written)};
}

TEST(PrefillPlanTest, RunsTheLayersAndLeavesTheLogitsToWhoAsks) {
  toy::ToyModel model = toy::buildToyModel();
  const TaskGraph &graph = model.graph;
  PrefillPlan prompt, logits;
  std::string error;
  ASSERT_TRUE(planPrefill(graph, false, prompt, error)) << error;
  ASSERT_TRUE(planPrefill(graph, true, logits, error)) << error;
  EXPECT_TRUE(runs(prompt, graph, OpKind::Embed));
  EXPECT_TRUE(runs(prompt, graph, OpKind::Attention));
  EXPECT_FALSE(runs(prompt, graph, OpKind::Argmax));
  EXPECT_FALSE(runs(logits, graph, OpKind::Argmax));
  // The lm_head only with the logits, and the logits kept whole.
  EXPECT_EQ(logits.operations.size(), prompt.operations.size() + 1);
  EXPECT_EQ(prompt.logits, kNoBuffer);
  ASSERT_NE(logits.logits, kNoBuffer);
  EXPECT_EQ(logits.rowLength[logits.logits], uint64_t(toy::kVocab));
  EXPECT_EQ(logits.gemmInputPerRow,
            uint64_t(std::max({toy::kHidden, toy::kHeads * toy::kHeadDim, toy::kIntermediate})));
  EXPECT_EQ(logits.gemmOutputPerRow,
            uint64_t(std::max({(toy::kHeads + 2 * toy::kKvHeads) * toy::kHeadDim,
                               2 * toy::kIntermediate, toy::kVocab})));
  EXPECT_EQ(logits.queriesPerRow, uint64_t(toy::kHeads * toy::kHeadDim));
}

// Each Gemv with an epilogue kernel (a bias, a SiLU-mul) and each attention
// hands the next Gemv its GEMM input when that Gemv reads its output and
// has no norm; the f32 output is left out only where that Gemv is its one
// reader.
TEST(PrefillPlanTest, HandsTheNextGemvItsInputWhereItReadsTheOutput) {
  toy::ToyModel model = toy::buildToyModel();
  const TaskGraph &graph = model.graph;
  for (bool withLogits : {false, true}) {
    PrefillPlan plan;
    std::string error;
    ASSERT_TRUE(planPrefill(graph, withLogits, plan, error)) << error;
    const size_t count = plan.operations.size();
    ASSERT_EQ(plan.feedsNextGemm.size(), count);
    ASSERT_EQ(plan.writesOutput.size(), count);
    size_t fedGemvs = 0, fedByAttention = 0, kept = 0;
    for (size_t step = 0; step < count; ++step) {
      const Operation &op = graph.operations[plan.operations[step]];
      const bool nextReads = step + 1 < count &&
                             graph.operations[plan.operations[step + 1]].kind == OpKind::Gemv &&
                             graph.operations[plan.operations[step + 1]].input == op.output;
      size_t readers = 0;
      for (uint32_t index : plan.operations) {
        const Operation &reader = graph.operations[index];
        readers += (reader.kind != OpKind::Embed && reader.input == op.output) +
                   (reader.epilogue == Epilogue::Residual && reader.residual == op.output);
      }
      const bool hasEpilogue =
          op.kind == OpKind::Gemv && (op.epilogue == Epilogue::SiluMul || !op.biases.empty());
      const bool nextHasNoNorm =
          nextReads && graph.operations[plan.operations[step + 1]].norm.name.empty();
      if (op.kind == OpKind::Gemv && hasEpilogue && nextHasNoNorm) {
        EXPECT_TRUE(plan.feedsNextGemm[step]) << op.name;
        EXPECT_EQ(plan.writesOutput[step], readers > 1) << op.name;
        ++fedGemvs;
        kept += readers > 1;
      } else if (op.kind == OpKind::Attention && nextHasNoNorm) {
        EXPECT_TRUE(plan.feedsNextGemm[step]) << op.name;
        EXPECT_FALSE(plan.writesOutput[step]) << op.name;
        ++fedByAttention;
      } else {
        EXPECT_FALSE(plan.feedsNextGemm[step]) << op.name;
        EXPECT_TRUE(plan.writesOutput[step]) << op.name;
      }
    }
    // Per layer: gate_up's SiLU into down, the attention into o_proj. (The
    // residual Gemvs' GEMMs add the residual and write the stream, which
    // the next Gemv's own norm reads.)
    EXPECT_EQ(fedByAttention, size_t(toy::kLayers));
    EXPECT_EQ(fedGemvs, size_t(toy::kLayers));
    EXPECT_EQ(kept, size_t(0));
  }
}

TEST(PrefillPlanTest, BuffersAliveAtOnceNeverShareSpace) {
  toy::ToyModel model = toy::buildToyModel();
  const TaskGraph &graph = model.graph;
  for (bool withLogits : {false, true}) {
    PrefillPlan plan;
    std::string error;
    ASSERT_TRUE(planPrefill(graph, withLogits, plan, error)) << error;
    std::vector<uint32_t> held;
    uint64_t total = 0;
    for (uint32_t b = 0; b < graph.buffers.size(); ++b)
      if (plan.arenaOffset[b] != PrefillPlan::kNoOffset) {
        held.push_back(b);
        total += plan.rowLength[b];
        EXPECT_LE(plan.arenaOffset[b] + plan.rowLength[b], plan.arenaFloatsPerRow);
      }
    // Every buffer an operation writes is placed; space is reused.
    for (uint32_t op : plan.operations)
      EXPECT_NE(plan.arenaOffset[graph.operations[op].output], PrefillPlan::kNoOffset);
    EXPECT_LT(plan.arenaFloatsPerRow, total);
    for (uint32_t a : held)
      for (uint32_t b : held) {
        if (a >= b)
          continue;
        auto [aFrom, aTo] = lifetime(plan, graph, a);
        auto [bFrom, bTo] = lifetime(plan, graph, b);
        if (a == plan.logits)
          aTo = plan.operations.size();
        if (b == plan.logits)
          bTo = plan.operations.size();
        bool together = aFrom <= bTo && bFrom <= aTo;
        bool overlap = plan.arenaOffset[a] < plan.arenaOffset[b] + plan.rowLength[b] &&
                       plan.arenaOffset[b] < plan.arenaOffset[a] + plan.rowLength[a];
        EXPECT_FALSE(together && overlap)
            << graph.buffers[a].name << " and " << graph.buffers[b].name << " share space";
      }
  }
}

TEST(PrefillPlanTest, RefusesStepsOfSeveralRows) {
  toy::ToyModel model = toy::buildToyModel();
  toy::makeRows(model.graph, 4, 4);
  PrefillPlan plan;
  std::string error;
  EXPECT_FALSE(planPrefill(model.graph, false, plan, error));
  EXPECT_NE(error.find("one row"), std::string::npos) << error;
}

// A decode graph whose o_proj projects by head (mkc compile
// --o-proj-by-head: its attention merged by it, its fixed64 output seeded
// by the residual's producer) runs prompts as the plain graph does:
// promptGraph gives the attention an output of its own, which o_proj reads,
// and o_proj adds the seeder's output as its residual.
TEST(PrefillPlanTest, PromptsRunAGraphProjectingByHeadAsAPlainOne) {
  toy::ToyModel model = toy::buildToyModel();
  TaskGraph &graph = model.graph;
  uint32_t attention = kNoBuffer, oProj = kNoBuffer;
  for (uint32_t index = 0; index < graph.operations.size(); ++index) {
    if (graph.operations[index].kind == OpKind::Attention && attention == kNoBuffer)
      attention = index;
    if (attention != kNoBuffer && oProj == kNoBuffer &&
        graph.operations[index].input == graph.operations[attention].output)
      oProj = index;
  }
  ASSERT_NE(oProj, kNoBuffer);
  Operation &att = graph.operations[attention], &o = graph.operations[oProj];
  const uint32_t residual = o.residual, attentionOutput = att.output;
  Operation *seeder = nullptr;
  for (Operation &op : graph.operations)
    if (op.output == residual)
      seeder = &op;
  ASSERT_NE(seeder, nullptr);
  // The by-head form, as the lowering makes it.
  att.output = att.partials;
  o.input = att.partials;
  setAttentionGeometry(o, attentionGeometry(att));
  o.sliceWidth = 8;
  o.epilogue = Epilogue::None;
  graph.buffers[o.output].element = BufferElement::Fixed64;
  seeder->seed = o.output;
  ASSERT_TRUE(projectsByHead(o) && mergedByReader(att));

  PrefillPlan refused;
  std::string error;
  EXPECT_FALSE(planPrefill(graph, false, refused, error)); // seeds, partials

  TaskGraph prompts = promptGraph(graph);
  const Operation &promptAttention = prompts.operations[attention];
  const Operation &promptO = prompts.operations[oProj];
  EXPECT_EQ(prompts.buffers.size(), graph.buffers.size() + 1);
  EXPECT_EQ(promptAttention.output, graph.buffers.size());
  EXPECT_EQ(prompts.buffers[promptAttention.output].kind, BufferKind::Activation);
  EXPECT_EQ(prompts.buffers[promptAttention.output].elements,
            graph.buffers[attentionOutput].elements);
  EXPECT_EQ(promptO.input, promptAttention.output);
  EXPECT_EQ(promptO.epilogue, Epilogue::Residual);
  EXPECT_EQ(promptO.residual, residual);
  EXPECT_FALSE(mergesAttention(promptO));
  EXPECT_EQ(prompts.buffers[promptO.output].element, BufferElement::F32);
  for (const Operation &op : prompts.operations)
    EXPECT_EQ(op.seed, kNoBuffer) << op.name;
  PrefillPlan plan;
  ASSERT_TRUE(planPrefill(prompts, false, plan, error)) << error;
  EXPECT_EQ(plan.operations.size(), graph.operations.size() - 2); // no lm_head, no argmax
}

// Operations without a prompt kernel are refused by name, and so is a
// Gemv seeding an Mlp; the caller then runs prompts one token a step.
TEST(PrefillPlanTest, RefusesOperationsWithoutAPromptKernel) {
  for (OpKind kind : {OpKind::Mlp, OpKind::AllReduce}) {
    toy::ToyModel model = toy::buildToyModel();
    Operation &down = model.graph.operations[5]; // a layer's Gemv made another kind
    down.kind = kind;
    PrefillPlan plan;
    std::string error;
    EXPECT_FALSE(planPrefill(model.graph, false, plan, error));
    EXPECT_NE(error.find("'" + down.name + "'"), std::string::npos) << error;
    EXPECT_NE(error.find(kind == OpKind::Mlp ? "an Mlp" : "an all-reduce"), std::string::npos)
        << error;
  }
  toy::ToyModel model = toy::buildToyModel();
  for (Operation &op : model.graph.operations)
    if (op.kind == OpKind::Gemv) {
      op.seed = 0;
      break;
    }
  PrefillPlan plan;
  std::string error;
  EXPECT_FALSE(planPrefill(model.graph, false, plan, error));
  EXPECT_NE(error.find("seeds a fixed64 output"), std::string::npos) << error;
}

} // namespace
} // namespace mk
