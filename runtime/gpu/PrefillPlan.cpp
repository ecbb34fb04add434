#include "runtime/gpu/PrefillPlan.h"

#include <algorithm>

namespace mk {

namespace {

// The buffers an operation reads (its input, and a Residual's residual).
std::vector<uint32_t> readsOf(const Operation &op) {
  std::vector<uint32_t> reads;
  if (op.kind != OpKind::Embed)
    reads.push_back(op.input);
  if (op.kind == OpKind::Gemv && op.epilogue == Epilogue::Residual)
    reads.push_back(op.residual);
  return reads;
}

// First fit of each buffer, in the order they are written, into space no
// buffer alive at the same time holds.
void placeBuffers(const TaskGraph &graph, PrefillPlan &plan) {
  const size_t count = graph.buffers.size();
  std::vector<size_t> written(count, SIZE_MAX), lastRead(count, 0);
  for (size_t step = 0; step < plan.operations.size(); ++step) {
    const Operation &op = graph.operations[plan.operations[step]];
    for (uint32_t buffer : readsOf(op))
      lastRead[buffer] = std::max(lastRead[buffer], step);
    if (written[op.output] == SIZE_MAX)
      written[op.output] = step;
  }
  struct Placed {
    uint64_t begin, end;
    size_t until;
  };
  std::vector<Placed> placed;
  for (size_t step = 0; step < plan.operations.size(); ++step) {
    uint32_t buffer = graph.operations[plan.operations[step]].output;
    if (written[buffer] != step)
      continue;
    // Space whose buffer's last reader ran before this writer is free.
    std::erase_if(placed, [&](const Placed &p) { return p.until < step; });
    std::sort(placed.begin(), placed.end(),
              [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
    uint64_t length = plan.rowLength[buffer], begin = 0;
    for (const Placed &p : placed) {
      if (p.begin >= begin + length)
        break;
      begin = std::max(begin, p.end);
    }
    // (A buffer no one reads, the logits, lives to the end.)
    size_t until = lastRead[buffer] > step ? lastRead[buffer] : plan.operations.size();
    placed.push_back({begin, begin + length, until});
    plan.arenaOffset[buffer] = begin;
    plan.arenaFloatsPerRow = std::max(plan.arenaFloatsPerRow, begin + length);
  }
}

// Whether a Gemv's results go through the epilogue kernel: a bias or a
// SiLU-mul. (Without either the GEMMs write the output, adding a residual
// themselves.)
bool hasEpilogueKernel(const Operation &op) {
  return !op.biases.empty() || isGated(op.epilogue);
}

// Which operations write their successor's GEMM input (PrefillPlan's
// feedsNextGemm) and which need not write their own output.
void fuseGemmInputs(const TaskGraph &graph, PrefillPlan &plan) {
  const size_t count = plan.operations.size();
  std::vector<size_t> reads(graph.buffers.size(), 0);
  for (uint32_t index : plan.operations)
    for (uint32_t buffer : readsOf(graph.operations[index]))
      ++reads[buffer];
  plan.feedsNextGemm.assign(count, 0);
  plan.writesOutput.assign(count, 1);
  for (size_t step = 0; step + 1 < count; ++step) {
    const Operation &op = graph.operations[plan.operations[step]];
    const Operation &next = graph.operations[plan.operations[step + 1]];
    if (next.kind != OpKind::Gemv || next.input != op.output)
      continue;
    const bool onlyReader = reads[op.output] == 1 && op.output != plan.logits;
    if (!next.norm.name.empty())
      continue;
    if (op.kind == OpKind::Gemv && hasEpilogueKernel(op)) {
      plan.feedsNextGemm[step] = 1;
      plan.writesOutput[step] = !onlyReader;
    } else if (op.kind == OpKind::Attention && onlyReader) {
      plan.feedsNextGemm[step] = 1;
      plan.writesOutput[step] = 0;
    }
  }
}

} // namespace

TaskGraph promptGraph(const TaskGraph &decode) {
  TaskGraph graph;
  graph.maxContext = decode.maxContext;
  graph.rows = decode.rows;
  graph.sequences = decode.sequences;
  graph.ranks = decode.ranks;
  graph.rank = decode.rank;
  graph.buffers = decode.buffers;
  graph.operations = decode.operations;
  graph.tokenBuffer = decode.tokenBuffer;
  graph.logitsBuffer = decode.logitsBuffer;
  // The buffer each seeded buffer starts from: the seeder's output.
  std::vector<uint32_t> seededFrom(graph.buffers.size(), kNoBuffer);
  for (const Operation &op : graph.operations)
    if (op.seed < graph.buffers.size())
      seededFrom[op.seed] = op.output;
  for (Operation &op : graph.operations) {
    op.seed = kNoBuffer;
    if (!mergedByReader(op))
      continue;
    const uint32_t partials = op.partials;
    op.output = static_cast<uint32_t>(graph.buffers.size());
    graph.buffers.push_back({op.name, BufferKind::Activation,
                             uint64_t(graph.rows) * uint64_t(op.numHeads * op.headDim)});
    for (Operation &reader : graph.operations) {
      if (!mergesAttention(reader) || reader.input != partials)
        continue;
      reader.input = op.output;
      if (projectsByHead(reader) && reader.output < graph.buffers.size()) {
        reader.epilogue = Epilogue::Residual;
        reader.residual = seededFrom[reader.output];
        reader.sliceWidth = 0;
      }
      setAttentionGeometry(reader, {});
    }
  }
  for (Buffer &buffer : graph.buffers)
    if (buffer.element == BufferElement::Fixed64)
      buffer.element = BufferElement::F32;
  return graph;
}

bool planPrefill(const TaskGraph &graph, bool withLogits, PrefillPlan &plan, std::string &error) {
  plan = PrefillPlan{};
  if (graph.rows != 1 || graph.sequences != 1 || graph.ranks != 1) {
    error = "a prompt runs layer by layer from the decode graph (one row, one sequence, one rank)";
    return false;
  }
  if (graph.operations.empty() || graph.operations.front().kind != OpKind::Embed) {
    error = "the graph does not start with its Embed";
    return false;
  }
  // The argmax's input is the logits; its producer runs only for them.
  std::vector<bool> feedsArgmax(graph.buffers.size(), false);
  for (const Operation &op : graph.operations)
    if (op.kind == OpKind::Argmax && op.input < graph.buffers.size())
      feedsArgmax[op.input] = true;
  for (uint32_t index = 0; index < graph.operations.size(); ++index) {
    const Operation &op = graph.operations[index];
    if (op.seed != kNoBuffer) {
      error = "operation '" + op.name +
              "' seeds a fixed64 output (--fuse-mlp, --o-proj-by-head), which has no prompt "
              "kernel";
      return false;
    }
    switch (op.kind) {
    case OpKind::Embed:
    case OpKind::Attention:
      break;
    case OpKind::Gemv:
      if (feedsArgmax[op.output]) {
        if (!withLogits)
          continue;
        plan.logits = op.output;
      }
      break;
    case OpKind::Argmax:
      continue;
    default:
      error = "operation '" + op.name + "' is of a kind without a prompt kernel (" +
              (op.kind == OpKind::Mlp ? "an Mlp, --fuse-mlp" : "an all-reduce") + ")";
      return false;
    }
    for (uint32_t buffer : readsOf(op))
      if (buffer >= graph.buffers.size() || graph.buffers[buffer].kind != BufferKind::Activation) {
        error = "operation '" + op.name + "' reads a buffer that is not an activation";
        return false;
      }
    if (op.output >= graph.buffers.size() ||
        graph.buffers[op.output].kind != BufferKind::Activation ||
        graph.buffers[op.output].element != BufferElement::F32) {
      error = "operation '" + op.name + "' writes a buffer that is not an f32 activation";
      return false;
    }
    plan.operations.push_back(index);
  }
  plan.rowLength.assign(graph.buffers.size(), 0);
  plan.arenaOffset.assign(graph.buffers.size(), PrefillPlan::kNoOffset);
  for (size_t b = 0; b < graph.buffers.size(); ++b)
    plan.rowLength[b] = graph.buffers[b].elements;
  for (uint32_t index : plan.operations) {
    const Operation &op = graph.operations[index];
    if (op.kind == OpKind::Gemv) {
      uint64_t stacked = 0;
      for (const WeightRef &weight : op.weights)
        stacked += weight.rows;
      plan.gemmInputPerRow = std::max(plan.gemmInputPerRow, op.inputLength);
      plan.gemmOutputPerRow = std::max(plan.gemmOutputPerRow, stacked);
    } else if (op.kind == OpKind::Attention) {
      plan.queriesPerRow = std::max(plan.queriesPerRow, uint64_t(op.numHeads * op.headDim));
    }
  }
  placeBuffers(graph, plan);
  fuseGemmInputs(graph, plan);
  return true;
}

} // namespace mk
