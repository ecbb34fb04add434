#include "compiler/taskgraph/TileOperations.h"

#include "compiler/taskgraph/RowTiling.h"

#include <algorithm>
#include <bit>

namespace mk {

namespace {

// An embedding row is one short read: a few tiles only spread the copy of a
// very wide hidden state.
constexpr uint64_t kEmbedRowsPerTile = 4096;
// Attention chunks: below 16 positions a chunk task is all overhead; past
// 256 one task streams long enough that more SMs should share the context,
// unless that would give the merge more than 64 chunks to combine.
constexpr uint64_t kShortestChunk = 16;
constexpr uint64_t kLongestChunk = 256;
constexpr uint64_t kMostChunks = 64;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

class Emitter {
public:
  Emitter(TaskGraph &graph, const TargetDescription &target) : graph(graph), target(target) {}

  void run() {
    outputEvent.assign(graph.operations.size(), 0);
    for (uint32_t op = 0; op < graph.operations.size(); ++op)
      outputEvent[op] = addEvent(graph.operations[op].name);
    for (uint32_t op = 0; op < graph.operations.size(); ++op) {
      switch (graph.operations[op].kind) {
      case OpKind::Embed:
        emitEmbed(op);
        break;
      case OpKind::Gemv:
        emitGemv(op);
        break;
      case OpKind::Attention:
        emitAttention(op);
        break;
      case OpKind::Argmax:
        emitArgmax(op);
        break;
      }
    }
  }

private:
  uint32_t addEvent(const std::string &name) {
    uint32_t id = graph.events.size();
    graph.events.push_back({id, name, 0});
    return id;
  }

  Task &addTask(TaskKind kind, uint32_t op, uint64_t begin, uint64_t end, uint32_t trigger,
                std::vector<Wait> waits) {
    Task task;
    task.id = graph.tasks.size();
    task.kind = kind;
    task.op = op;
    task.begin = begin;
    task.end = end;
    task.trigger = trigger;
    task.waits = std::move(waits);
    ++graph.events[trigger].triggerCount;
    graph.tasks.push_back(std::move(task));
    return graph.tasks.back();
  }

  // The op writing `buffer`; an op at or after `consumer` wrote it in the
  // previous step (the token, written by the argmax).
  std::vector<Wait> waitsForBuffers(uint32_t consumer, std::initializer_list<uint32_t> buffers) {
    std::vector<Wait> waits;
    for (uint32_t buffer : buffers)
      for (uint32_t op = 0; op < graph.operations.size(); ++op) {
        if (graph.operations[op].output != buffer)
          continue;
        Wait wait{outputEvent[op], op < consumer ? 0 : -1};
        bool seen = std::any_of(waits.begin(), waits.end(), [&](const Wait &w) {
          return w.event == wait.event && w.stepOffset == wait.stepOffset;
        });
        if (!seen)
          waits.push_back(wait);
      }
    return waits;
  }

  void emitEmbed(uint32_t opIndex) {
    const Operation &op = graph.operations[opIndex];
    auto waits = waitsForBuffers(opIndex, {op.input});
    uint64_t tiles = ceilDiv(op.outputLength, kEmbedRowsPerTile);
    for (const RowTile &tile : tileRows(op.outputLength, {}, tiles)) {
      Task &task = addTask(TaskKind::Embed, opIndex, tile.first, tile.second,
                           outputEvent[opIndex], waits);
      task.reads = {{op.input, 0, 1}};
      task.writes = {{op.output, tile.first, tile.second}};
      task.weightBytes = (tile.second - tile.first) * target.bytesPerWeight;
    }
  }

  // Where a tile may not cross: between two stacked weights, and, when the
  // output is an attention's q | k | v, between two KV groups' rows.
  std::vector<uint64_t> gemvCuts(uint32_t opIndex) const {
    const Operation &op = graph.operations[opIndex];
    std::vector<uint64_t> cuts;
    if (op.epilogue == Epilogue::SiluMul)
      return cuts; // output row j needs row j of both weights
    uint64_t row = 0;
    for (const WeightRef &weight : op.weights)
      cuts.push_back(row += weight.rows);
    for (const Operation &attention : graph.operations) {
      if (attention.kind != OpKind::Attention || attention.input != op.output)
        continue;
      uint64_t heads = attention.numHeads, kvHeads = attention.numKvHeads,
               headDim = attention.headDim, group = heads / kvHeads;
      for (uint64_t g = 1; g <= kvHeads; ++g) {
        cuts.push_back(g * group * headDim);
        cuts.push_back(heads * headDim + g * headDim);
        cuts.push_back((heads + kvHeads) * headDim + g * headDim);
      }
    }
    return cuts;
  }

  uint64_t gemvWeightElements(const Operation &op, uint64_t rows) const {
    uint64_t perRow = op.inputLength + (op.biases.empty() ? 0 : 1);
    uint64_t stacked = op.epilogue == Epilogue::SiluMul ? 2 : 1;
    return stacked * rows * perRow + (op.norm.name.empty() ? 0 : op.inputLength);
  }

  void emitGemv(uint32_t opIndex) {
    const Operation &op = graph.operations[opIndex];
    bool residual = op.epilogue == Epilogue::Residual;
    auto waits = residual ? waitsForBuffers(opIndex, {op.input, op.residual})
                          : waitsForBuffers(opIndex, {op.input});
    for (const RowTile &tile : tileRows(op.outputLength, gemvCuts(opIndex), target.numSms)) {
      Task &task =
          addTask(TaskKind::Gemv, opIndex, tile.first, tile.second, outputEvent[opIndex], waits);
      task.reads = {{op.input, 0, op.inputLength}};
      if (residual)
        task.reads.push_back({op.residual, tile.first, tile.second});
      task.writes = {{op.output, tile.first, tile.second}};
      task.weightBytes =
          gemvWeightElements(op, tile.second - tile.first) * target.bytesPerWeight;
    }
  }

  void emitAttention(uint32_t opIndex) {
    const Operation &op = graph.operations[opIndex];
    uint64_t heads = op.numHeads, kvHeads = op.numKvHeads, headDim = op.headDim;
    uint64_t group = heads / kvHeads, chunks = op.numChunks, partial = headDim + 2;
    uint32_t prepared = addEvent(op.name + ".prepare");
    uint32_t chunked = addEvent(op.name + ".chunk");
    uint64_t normElements = (op.qNorm.name.empty() ? 0 : headDim) +
                            (op.kNorm.name.empty() ? 0 : headDim);

    auto inputWaits = waitsForBuffers(opIndex, {op.input});
    for (uint64_t g = 0; g < kvHeads; ++g) {
      Task &task = addTask(TaskKind::AttentionPrepare, opIndex, g, g + 1, prepared, inputWaits);
      uint64_t kOffset = heads * headDim, vOffset = (heads + kvHeads) * headDim;
      task.reads = {{op.input, g * group * headDim, (g + 1) * group * headDim},
                    {op.input, kOffset + g * headDim, kOffset + (g + 1) * headDim},
                    {op.input, vOffset + g * headDim, vOffset + (g + 1) * headDim}};
      task.writes = {{op.roped, g * group * headDim, (g + 1) * group * headDim},
                     {op.keyCache, g * headDim, (g + 1) * headDim},
                     {op.valueCache, g * headDim, (g + 1) * headDim}};
      task.weightBytes = normElements * target.bytesPerWeight;
    }
    // Any chunk may hold this step's position, so every chunk lists the slot
    // Prepare writes.
    for (uint64_t g = 0; g < kvHeads; ++g)
      for (uint64_t c = 0; c < chunks; ++c) {
        Task &task =
            addTask(TaskKind::AttentionChunk, opIndex, g, c, chunked, {{prepared, 0}});
        task.reads = {{op.roped, g * group * headDim, (g + 1) * group * headDim},
                      {op.keyCache, g * headDim, (g + 1) * headDim},
                      {op.valueCache, g * headDim, (g + 1) * headDim}};
        for (uint64_t h = g * group; h < (g + 1) * group; ++h)
          task.writes.push_back(
              {op.partials, (h * chunks + c) * partial, (h * chunks + c + 1) * partial});
      }
    for (uint64_t g = 0; g < kvHeads; ++g) {
      Task &task = addTask(TaskKind::AttentionMerge, opIndex, g, g + 1, outputEvent[opIndex],
                           {{chunked, 0}});
      uint64_t groupPartials = group * chunks * partial;
      task.reads = {{op.partials, g * groupPartials, (g + 1) * groupPartials}};
      task.writes = {{op.output, g * group * headDim, (g + 1) * group * headDim}};
    }
  }

  void emitArgmax(uint32_t opIndex) {
    const Operation &op = graph.operations[opIndex];
    Task &task = addTask(TaskKind::Argmax, opIndex, 0, op.inputLength, outputEvent[opIndex],
                         waitsForBuffers(opIndex, {op.input}));
    task.reads = {{op.input, 0, op.inputLength}};
    task.writes = {{op.output, 0, 1}};
  }

  TaskGraph &graph;
  const TargetDescription &target;
  std::vector<uint32_t> outputEvent; // per operation: the event its output is ready on
};

} // namespace

int64_t attentionChunkSize(int64_t maxContext, int64_t numKvHeads, uint32_t numSms) {
  // The smallest power of two that cuts the context into at most `chunks`
  // (2^63 at most, for one chunk of the largest context, then clamped).
  auto sizeFor = [&](uint64_t chunks) {
    return std::bit_ceil(ceilDiv(std::max<int64_t>(maxContext, 1), chunks));
  };
  uint64_t kvHeads = std::max<int64_t>(numKvHeads, 1);
  uint64_t chunksPerKvHead = std::clamp<uint64_t>(numSms / kvHeads, 1, kMostChunks);
  uint64_t size = std::clamp(sizeFor(chunksPerKvHead), kShortestChunk, kLongestChunk);
  return static_cast<int64_t>(std::max(size, sizeFor(kMostChunks)));
}

void tileOperations(TaskGraph &graph, const TargetDescription &target) {
  graph.tasks.clear();
  graph.events.clear();
  Emitter(graph, target).run();
}

} // namespace mk
