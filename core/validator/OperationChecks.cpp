// An operation's fields are checked against each other, against the buffers
// they name and against the shapes of their weights, so that the derived
// accesses of every tile (TaskFootprint.cpp) stay inside their buffers and
// the executors can index weights without checking again.
#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/ValidatorChecks.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace mk::validation {

namespace {

enum class Size { AtLeast, Exactly };

class OperationCheck {
public:
  OperationCheck(const TaskGraph &graph, uint32_t index)
      : graph(graph), op(graph.operations[index]) {}

  std::string run();

private:
  std::string embed();
  std::string gemv();
  std::string gemvWeights();
  std::string attention();
  std::string attentionBuffers();
  std::string attentionReaders();
  std::string mergedInput();
  std::string byHead();
  std::string headTilesCover();
  std::string argmax();
  std::string picks();
  std::string allReduce();
  std::string mlp();
  std::string seed();
  std::string prologue();

  std::string buffer(uint32_t index, const char *role, std::initializer_list<BufferKind> kinds,
                     uint64_t elements, Size size);
  std::string matrix(const WeightRef &weight, const char *role, uint64_t rows, uint64_t cols);
  std::string vector(const WeightRef &weight, const char *role, uint64_t elements);
  std::string epsilon();
  bool isFixed(uint32_t index) const { return keepsFixed64(graph, index); }

  const TaskGraph &graph;
  const Operation &op;
};

constexpr std::initializer_list<BufferKind> values = {BufferKind::Activation, BufferKind::Scratch};

std::string OperationCheck::run() {
  if (op.picks != kNoBuffer && op.kind != OpKind::Gemv && op.kind != OpKind::Argmax)
    return "has picks, which only a Gemv and the Argmax reading its logits may have";
  if (op.seed != kNoBuffer && op.kind != OpKind::Gemv && op.kind != OpKind::Embed)
    return "seeds a fixed64 output, which only an Embed or a Gemv may";
  // Fixed64 values are written by seeds and the additions of an Mlp or a
  // Gemv projecting by head, and read only where the engines convert them:
  // a Gemv's input and residual.
  if (op.kind != OpKind::Mlp && op.kind != OpKind::Argmax && !projectsByHead(op) &&
      isFixed(op.output))
    return cat("writes buffer '", graph.buffers[op.output].name,
               "', which is fixed64, as f32 values");
  if (op.kind != OpKind::Gemv && (isFixed(op.input) || (op.kind == OpKind::AllReduce &&
                                                         isFixed(op.residual))))
    return "reads a fixed64 buffer, which only a Gemv may";
  switch (op.kind) {
  case OpKind::Embed:
    return embed();
  case OpKind::Gemv:
    return gemv();
  case OpKind::Attention:
    return attention();
  case OpKind::Argmax:
    return argmax();
  case OpKind::AllReduce:
    return allReduce();
  case OpKind::Mlp:
    return mlp();
  }
  return cat("has an unknown kind (", int(op.kind), ")");
}

std::string OperationCheck::buffer(uint32_t index, const char *role,
                                   std::initializer_list<BufferKind> kinds, uint64_t elements,
                                   Size size) {
  if (index >= graph.buffers.size())
    return cat("its ", role, " buffer ", index, " is out of range (", graph.buffers.size(),
               " buffers)");
  const Buffer &named = graph.buffers[index];
  if (std::find(kinds.begin(), kinds.end(), named.kind) == kinds.end()) {
    std::string expected;
    for (BufferKind kind : kinds)
      expected += (expected.empty() ? "" : " or ") + std::string(bufferKindName(kind));
    return cat("its ", role, " buffer '", named.name, "' is ", bufferKindName(named.kind),
               ", expected ", expected);
  }
  // Sizes are of one row of the step, or of one sequence of a KV cache
  // (checkBuffers has checked that they divide).
  bool isCache = named.kind == BufferKind::KVCache;
  int64_t parts = isCache ? graph.sequences : graph.rows;
  uint64_t held = named.elements / static_cast<uint64_t>(parts);
  bool fits = size == Size::Exactly ? held == elements : held >= elements;
  if (!fits)
    return cat("its ", role, " buffer '", named.name, "' has ", held, " elements",
               parts == 1 ? "" : isCache ? " a sequence" : " a row", ", expected ",
               size == Size::Exactly ? "exactly " : "at least ", elements);
  return "";
}

std::string OperationCheck::matrix(const WeightRef &weight, const char *role, uint64_t rows,
                                   uint64_t cols) {
  if (weight.name.empty())
    return cat("its ", role, " weight has no name");
  if (weight.rows != rows || weight.cols != cols)
    return cat("its ", role, " weight '", weight.name, "' is [", weight.rows, ", ", weight.cols,
               "], expected [", rows, ", ", cols, "]");
  return "";
}

std::string OperationCheck::vector(const WeightRef &weight, const char *role, uint64_t elements) {
  return matrix(weight, role, elements, 1);
}

std::string OperationCheck::epsilon() {
  if (!std::isfinite(op.eps) || op.eps < 0)
    return cat("its eps ", op.eps, " is not a finite non-negative number");
  return "";
}

std::string OperationCheck::embed() {
  if (op.weights.size() != 1)
    return cat("has ", op.weights.size(), " weights, expected the table alone");
  const WeightRef &table = op.weights[0];
  if (table.name.empty() || table.rows == 0 || table.cols == 0)
    return cat("its table '", table.name, "' is [", table.rows, ", ", table.cols,
               "], expected a named non-empty [vocab, hidden]");
  if (op.outputLength != table.cols)
    return cat("has outputLength ", op.outputLength, " but its table has ", table.cols, " columns");
  if (op.input != graph.tokenBuffer)
    return cat("reads buffer ", op.input, ", not the token buffer ", graph.tokenBuffer);
  if (std::string problem = seed(); !problem.empty())
    return problem;
  return buffer(op.output, "output", values, op.outputLength, Size::AtLeast);
}

std::string OperationCheck::gemvWeights() {
  if (op.weights.empty())
    return "has no weights";
  if (!op.biases.empty() && op.biases.size() != op.weights.size())
    return cat("has ", op.biases.size(), " biases for ", op.weights.size(), " weights");
  uint64_t stackedRows = 0;
  for (size_t i = 0; i < op.weights.size(); ++i) {
    const WeightRef &weight = op.weights[i];
    if (weight.rows == 0)
      return cat("its weight '", weight.name, "' has no rows");
    if (std::string problem = matrix(weight, "stacked", weight.rows, op.inputLength); !problem.empty())
      return problem;
    if (!op.biases.empty())
      if (std::string problem = vector(op.biases[i], "bias", weight.rows); !problem.empty())
        return problem;
    if (!add(stackedRows, weight.rows, stackedRows))
      return "its weights stack more than 2^64 rows";
  }
  uint64_t expected = 0;
  uint64_t factor = isGated(op.epilogue) ? 2 : 1;
  if (!multiply(op.outputLength, factor, expected) || stackedRows != expected)
    return cat("its weights stack ", stackedRows, " rows, expected ", factor, " x outputLength ",
               op.outputLength, " for epilogue ", epilogueName(op.epilogue));
  return "";
}

std::string OperationCheck::gemv() {
  if (op.epilogue != Epilogue::None && !isGated(op.epilogue) && op.epilogue != Epilogue::Residual)
    return cat("has an unknown epilogue (", int(op.epilogue), ")");
  if (op.inputLength == 0 || op.outputLength == 0)
    return cat("has inputLength ", op.inputLength, " and outputLength ", op.outputLength,
               ", both must be positive");
  if (std::string problem = gemvWeights(); !problem.empty())
    return problem;
  if (std::string problem = mergesAttention(op) ? mergedInput() : prologue(); !problem.empty())
    return problem;
  if (op.sliceWidth < 0 || (op.sliceWidth != 0 && !mergesAttention(op)))
    return cat("has sliceWidth ", op.sliceWidth,
               ", which only a Gemv merging an attention's partials by head has");
  if (projectsByHead(op))
    return byHead();
  if (op.epilogue == Epilogue::Residual)
    if (std::string problem = buffer(op.residual, "residual", values, op.outputLength, Size::AtLeast);
        !problem.empty())
      return problem;
  if (std::string problem = picks(); !problem.empty())
    return problem;
  if (std::string problem = seed(); !problem.empty())
    return problem;
  return buffer(op.output, "output", values, op.outputLength, Size::AtLeast);
}

// A Gemv's or an Mlp's norm, if it has one, and its input, read whole: the
// norm prologue needs all of it.
std::string OperationCheck::prologue() {
  if (!op.norm.name.empty()) {
    if (std::string problem = vector(op.norm, "norm", op.inputLength); !problem.empty())
      return problem;
    if (std::string problem = epsilon(); !problem.empty())
      return problem;
  }
  return buffer(op.input, "input", values, op.inputLength, Size::Exactly);
}

// A Gemv merging an attention's partials (core/taskgraph/TaskGraph.h): the
// reader of an attention merged by its reader, with that attention's
// geometry, no norm, one row a step, no picks.
std::string OperationCheck::mergedInput() {
  const Operation *attention = nullptr;
  for (const Operation &other : graph.operations)
    if (mergedByReader(other) && other.partials == op.input)
      attention = &other;
  if (!attention)
    return "merges an attention's partials (numHeads > 0), but its input is not the partials of "
           "an attention merged by its reader";
  if (attentionGeometry(op) != attentionGeometry(*attention))
    return cat("merges the partials of '", attention->name,
               "' with heads, chunks or window other than that attention's");
  uint64_t queries = 0;
  if (!multiply(op.numHeads, op.headDim, queries) || op.inputLength != queries)
    return cat("merges ", op.numHeads, " heads of ", op.headDim, " into an input of ",
               op.inputLength);
  if (!op.norm.name.empty() || op.picks != kNoBuffer || graph.rows != 1 || op.headDim % 2 != 0 ||
      op.numChunks > 64)
    return "merges an attention's partials with a norm, picks, several rows a step, heads of "
           "odd length or more than 64 chunks, which a merging Gemv may not have";
  return "";
}

// A Gemv projecting by head (projectsByHead): one weight of the heads'
// columns, no bias and no epilogue (the residual is its output's seed),
// heads of whole 16-byte units of bf16 weights up to a warp of them, at
// most sliceWidth rows a tile; the output a Fixed64 buffer of its rows,
// which the tiles add into.
std::string OperationCheck::byHead() {
  if (uint64_t(op.sliceWidth) > op.outputLength)
    return cat("has sliceWidth ", op.sliceWidth, ", expected rows a tile in [1, ",
               op.outputLength, "]");
  if (op.weights.size() != 1 || !op.biases.empty() || op.epilogue != Epilogue::None ||
      op.seed != kNoBuffer)
    return "projects by head with several weights, biases, an epilogue or a seed, which it may "
           "not have (its residual is its output's seed)";
  if (op.headDim % 8 != 0 || op.headDim > 256)
    return cat("projects heads of ", op.headDim,
               " by head, which needs a multiple of 8 of at most 256");
  if (op.numHeads > MK_HEAD_TILE_MOST_HEADS || op.outputLength >> MK_HEAD_TILE_ROW_BITS != 0)
    return cat("projects ", op.numHeads, " heads into ", op.outputLength,
               " rows by head; its tiles name at most ", MK_HEAD_TILE_MOST_HEADS,
               " heads and 2^", MK_HEAD_TILE_ROW_BITS, " rows");
  if (std::string problem =
          buffer(op.output, "output", {BufferKind::Activation}, op.outputLength, Size::Exactly);
      !problem.empty())
    return problem;
  if (!isFixed(op.output))
    return cat("adds into buffer '", graph.buffers[op.output].name, "', which is not fixed64");
  return headTilesCover();
}

// Every row of every head's columns added once a step: the tiles of each
// head, in row order, follow each other from row 0 to the last. (Tiles are
// checked one by one after the operations: here only their extents.)
std::string OperationCheck::headTilesCover() {
  const uint32_t index = static_cast<uint32_t>(&op - graph.operations.data());
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> heads(op.numHeads);
  for (const Task &task : graph.tasks) {
    if (task.op != index || task.kind != TaskKind::HeadProjection)
      continue;
    const uint64_t head = headTileHead(task.begin);
    if (head < heads.size())
      heads[head].push_back({headTileRow(task.begin), headTileRow(task.end)});
  }
  for (uint64_t head = 0; head < heads.size(); ++head) {
    std::sort(heads[head].begin(), heads[head].end());
    uint64_t next = 0;
    for (auto [first, end] : heads[head]) {
      if (first != next)
        break;
      next = end;
    }
    if (next != op.outputLength)
      return cat("its HeadProjection tiles of q head ", head, " add rows [0, ", next,
                 ") once each in order, not all ", op.outputLength);
  }
  return "";
}

// The output it seeds: a Fixed64 buffer of its rows, which an Mlp or a Gemv
// projecting by head adds into; its own output stays f32.
std::string OperationCheck::seed() {
  if (op.seed == kNoBuffer)
    return "";
  if (std::string problem = buffer(op.seed, "seeded", {BufferKind::Activation}, op.outputLength,
                                   Size::Exactly);
      !problem.empty())
    return problem;
  if (graph.buffers[op.seed].element != BufferElement::Fixed64)
    return cat("seeds buffer '", graph.buffers[op.seed].name, "', which is not fixed64");
  if (op.seed == op.output || isFixed(op.output))
    return "seeds its own output, or writes a fixed64 output";
  return "";
}

// Gate and up [I, K], down [N, I]; the input read whole, the output a
// Fixed64 buffer of N a row, which the slices add into.
std::string OperationCheck::mlp() {
  if (op.inputLength == 0 || op.outputLength == 0)
    return cat("has inputLength ", op.inputLength, " and outputLength ", op.outputLength,
               ", both must be positive");
  if (op.weights.size() != 3 || !op.biases.empty())
    return cat("has ", op.weights.size(), " weights and ", op.biases.size(),
               " biases, expected gate, up and down and no biases");
  uint64_t channels = op.weights[0].rows;
  if (channels == 0 || channels % 8 != 0)
    return cat("has ", channels, " intermediate channels, expected a positive multiple of 8");
  if (op.sliceWidth <= 0 || op.sliceWidth % 8 != 0 || uint64_t(op.sliceWidth) > channels)
    return cat("has sliceWidth ", op.sliceWidth, ", expected a positive multiple of 8 of at most ",
               channels, " channels");
  if (std::string problem = matrix(op.weights[0], "gate", channels, op.inputLength); !problem.empty())
    return problem;
  if (std::string problem = matrix(op.weights[1], "up", channels, op.inputLength); !problem.empty())
    return problem;
  if (std::string problem = matrix(op.weights[2], "down", op.outputLength, channels);
      !problem.empty())
    return problem;
  if (std::string problem = prologue(); !problem.empty())
    return problem;
  if (std::string problem =
          buffer(op.output, "output", {BufferKind::Activation}, op.outputLength, Size::Exactly);
      !problem.empty())
    return problem;
  if (graph.buffers[op.output].element != BufferElement::Fixed64)
    return cat("adds into buffer '", graph.buffers[op.output].name, "', which is not fixed64");
  return "";
}

// A pair (value, index) a pick, numPicks of them a row.
std::string OperationCheck::picks() {
  if (op.picks == kNoBuffer)
    return op.numPicks == 0 ? "" : cat("has numPicks ", op.numPicks, " but no picks buffer");
  if (op.numPicks < 1 || op.numPicks > INT32_MAX)
    return cat("has numPicks ", op.numPicks, ", expected a number in [1, 2^31)");
  return buffer(op.picks, "picks", {BufferKind::Scratch}, 2 * uint64_t(op.numPicks), Size::Exactly);
}

std::string OperationCheck::attention() {
  if (op.numHeads <= 0 || op.numKvHeads <= 0 || op.headDim <= 0)
    return cat("has numHeads ", op.numHeads, ", numKvHeads ", op.numKvHeads, ", headDim ",
               op.headDim, "; all must be positive");
  if (op.numHeads % op.numKvHeads != 0)
    return cat("has ", op.numHeads, " heads, not a multiple of its ", op.numKvHeads, " KV heads");
  if (op.rotaryDim < 0 || op.rotaryDim % 2 != 0 || op.rotaryDim > op.headDim)
    return cat("has rotaryDim ", op.rotaryDim, ", expected an even number in [0, headDim ",
               op.headDim, "]");
  if (op.invFreq.size() != static_cast<uint64_t>(op.rotaryDim / 2))
    return cat("has ", op.invFreq.size(), " rotary frequencies, expected rotaryDim / 2 = ",
               op.rotaryDim / 2);
  if (!std::isfinite(op.scale))
    return cat("has scale ", op.scale, ", not finite");
  if (op.chunkSize <= 0)
    return cat("has chunkSize ", op.chunkSize, ", expected a positive number");
  if (op.window < 0 || op.window > INT32_MAX)
    return cat("has window ", op.window, ", expected a number in [0, 2^31) (0: none)");
  // The chunks cover the positions one step attends to at most.
  int64_t reach = attentionReach(graph.maxContext, op.window);
  int64_t chunks = reach / op.chunkSize + (reach % op.chunkSize != 0);
  if (op.numChunks != chunks)
    return cat("has numChunks ", op.numChunks, ", expected ceil(", reach,
               op.window > 0 && op.window < graph.maxContext ? " positions of its window"
                                                              : " positions of maxContext",
               " / chunkSize ", op.chunkSize, ") = ", chunks);
  if (op.chunksPerRound < 1 || op.chunksPerRound > op.numChunks)
    return cat("has chunksPerRound ", op.chunksPerRound, ", expected a number in [1, numChunks ",
               op.numChunks, "]");
  for (auto [norm, role] : {std::pair{&op.qNorm, "q norm"}, {&op.kNorm, "k norm"}}) {
    if (norm->name.empty())
      continue;
    if (std::string problem = vector(*norm, role, op.headDim); !problem.empty())
      return problem;
    if (std::string problem = epsilon(); !problem.empty())
      return problem;
  }
  if (std::string problem = attentionBuffers(); !problem.empty())
    return problem;
  return attentionReaders();
}

// Merged by its reader, its output is its partials: only a Gemv that merges
// them may read it.
std::string OperationCheck::attentionReaders() {
  if (!mergedByReader(op))
    return "";
  for (const Operation &reader : graph.operations) {
    bool readsInput = reader.input == op.output;
    bool readsResidual = reader.residual == op.output &&
                         (reader.epilogue == Epilogue::Residual || reader.kind == OpKind::AllReduce);
    if (&reader != &op && (readsResidual || (readsInput && !mergesAttention(reader))))
      return cat("is merged by its reader, but '", reader.name,
                 "' reads its partials as a plain vector");
  }
  return "";
}

std::string OperationCheck::attentionBuffers() {
  uint64_t queries = 0, keys = 0, qkv = 0, slots = 0, cache = 0, partials = 0;
  bool fits = multiply(op.numHeads, op.headDim, queries) &&
              multiply(op.numKvHeads, op.headDim, keys) && multiply(keys, 2, qkv) &&
              add(qkv, queries, qkv) && multiply(keys, graph.maxContext, cache) &&
              multiply(op.numHeads, op.numChunks, slots) &&
              multiply(slots, uint64_t(op.headDim) + 2, partials);
  if (!fits)
    return "has head counts and sizes whose buffers would exceed 2^64 elements";
  if (std::string problem = buffer(op.input, "q|k|v input", values, qkv, Size::Exactly);
      !problem.empty())
    return problem;
  if (std::string problem = buffer(op.output, "output", values, queries, Size::AtLeast);
      !problem.empty())
    return problem;
  for (auto [index, role] : {std::pair{op.keyCache, "key cache"}, {op.valueCache, "value cache"}})
    if (std::string problem = buffer(index, role, {BufferKind::KVCache}, cache, Size::Exactly);
        !problem.empty())
      return problem;
  if (op.keyCache == op.valueCache)
    return "uses one buffer as both its key and its value cache";
  if (graph.buffers[op.keyCache].element != graph.buffers[op.valueCache].element)
    return "keeps its keys and its values in different element types";
  return buffer(op.partials, "partials", {BufferKind::Scratch}, partials, Size::AtLeast);
}

std::string OperationCheck::argmax() {
  if (op.output != graph.tokenBuffer)
    return cat("writes buffer ", op.output, ", not the token buffer ", graph.tokenBuffer);
  if (op.inputLength == 0)
    return "has inputLength 0: it picks from no logits";
  // Each row picks from its row of the input, which is all logits.
  if (std::string problem = buffer(op.input, "input", values, op.inputLength, Size::Exactly);
      !problem.empty())
    return problem;
  if (op.picks == kNoBuffer)
    return picks();
  // Its picks are those its logits' Gemv writes, of the same rows.
  for (const Operation &producer : graph.operations)
    if (producer.kind == OpKind::Gemv && producer.output == op.input) {
      if (producer.picks != op.picks || producer.numPicks != op.numPicks)
        return cat("reads picks ", op.picks, " (", op.numPicks, " a row), but its logits' Gemv '",
                   producer.name, "' writes ",
                   producer.picks == kNoBuffer
                       ? std::string("none")
                       : cat("picks ", producer.picks, " (", producer.numPicks, " a row)"));
      return picks();
    }
  return "reads picks, but no Gemv computes its logits";
}

// The partial sums, the residual and the output, a row each of outputLength.
std::string OperationCheck::allReduce() {
  if (op.outputLength == 0)
    return "has outputLength 0";
  if (std::string problem = buffer(op.input, "partial sums", values, op.outputLength, Size::Exactly);
      !problem.empty())
    return problem;
  if (std::string problem = buffer(op.residual, "residual", values, op.outputLength, Size::AtLeast);
      !problem.empty())
    return problem;
  return buffer(op.output, "output", values, op.outputLength, Size::AtLeast);
}

} // namespace

std::string checkOperation(const TaskGraph &graph, uint32_t index) {
  std::string problem = OperationCheck(graph, index).run();
  return problem.empty() ? "" : describeOperation(graph, index) + ": " + problem;
}

std::string checkTile(const TaskGraph &graph, uint32_t index) {
  const Task &task = graph.tasks[index];
  const TaskKindDescription &kind = describeKind(task.kind);
  std::string problem = kind.checkTile(graph.operations[task.op], task);
  // What the scheduler balanced and inspect reports: the kind's own count,
  // checked only once the tile is known good.
  if (problem.empty()) {
    uint64_t expected = kind.weightElements(graph.operations[task.op], task) * kBytesPerStreamedWeight;
    if (task.weightBytes != expected)
      problem = "streams " + std::to_string(task.weightBytes) + " bytes of weights, its tile " +
                std::to_string(expected);
  }
  return problem.empty() ? "" : describeTask(graph, index) + ": " + problem;
}

} // namespace mk::validation
