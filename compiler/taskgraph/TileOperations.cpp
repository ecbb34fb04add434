#include "compiler/taskgraph/TileOperations.h"

#include "compiler/taskgraph/RowTiling.h"
#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/TaskKind.h"

#include <algorithm>

namespace mk {

namespace {

// An embedding row is one short read: a few tiles only spread the copy of a
// very wide hidden state.
constexpr uint64_t kEmbedRowsPerTile = 4096;
// Attention chunks: below 16 positions a chunk task is all overhead; past
// the target's longest chunk more tasks share the context, unless that would
// give the merge more than 64 chunks to combine. A chunk's size is a whole
// number of spans' grain; its scores (group x chunk floats in shared memory)
// stay within 64 KiB, so that the staging ring keeps its slots beside them.
constexpr uint64_t kShortestChunk = 16;
constexpr uint64_t kMostChunks = 64;
constexpr uint64_t kSpanGrain = kAttentionSpanGrain;
constexpr uint64_t kMostScoreFloats = 16 * 1024;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t roundUp(uint64_t a, uint64_t b) { return ceilDiv(a, b) * b; }

// A task's tile: [begin, end) as its kind's description reads them.
struct Tile {
  uint64_t begin, end;
};

class Emitter {
public:
  Emitter(TaskGraph &graph, const TargetDescription &target) : graph(graph), target(target) {}

  void run() {
    if (target.logitPicks)
      addLogitPicks();
    outputEvent.assign(graph.operations.size(), 0);
    for (uint32_t op = 0; op < graph.operations.size(); ++op)
      outputEvent[op] = addEvent(graph.operations[op].name);
    for (uint32_t op = 0; op < graph.operations.size(); ++op)
      emitOperation(op);
  }

private:
  uint32_t addEvent(const std::string &name) {
    uint32_t id = graph.events.size();
    graph.events.push_back({id, name, 0});
    return id;
  }

  // The task kinds of an operation, as its phases (TaskKind.h: Events):
  // phase 0 waits on the producers of the operation's inputs, each later
  // phase on the one before; a phase with a phaseEvent triggers it, the last
  // one the operation's output event. A kind the operation has no tiles of
  // (the merge of an attention merged by its reader) is no phase.
  void emitOperation(uint32_t opIndex) {
    const Operation &op = graph.operations[opIndex];
    std::vector<std::pair<const TaskKindDescription *, std::vector<Tile>>> phases;
    for (size_t kind = 0; kind < kNumTaskKinds; ++kind) {
      const TaskKindDescription &description = describeKind(static_cast<TaskKind>(kind));
      if (description.operation != op.kind)
        continue;
      std::vector<Tile> tiles = tilesOf(description.kind, opIndex);
      if (!tiles.empty())
        phases.emplace_back(&description, std::move(tiles));
    }
    std::vector<Wait> waits = inputWaits(opIndex);
    for (size_t phase = 0; phase < phases.size(); ++phase) {
      const TaskKindDescription &description = *phases[phase].first;
      const std::vector<Tile> &tiles = phases[phase].second;
      uint32_t trigger = phase + 1 < phases.size()
                             ? addEvent(op.name + "." + description.phaseEvent)
                             : outputEvent[opIndex];
      if (description.kind == TaskKind::Gemv && op.picks != kNoBuffer)
        sizePicks(op.picks, tiles.size());
      for (uint32_t ordinal = 0; ordinal < tiles.size(); ++ordinal)
        addTask(description, opIndex, tiles[ordinal], ordinal, trigger, waits);
      waits = {{trigger, 0}};
    }
  }

  // The Gemv whose output the Argmax picks from writes its tiles' picks
  // (Operation::picks): a greedy Argmax then reads a pair per tile, not
  // the vocabulary. A graph tiled again (a tensor-parallel rank's) keeps
  // its picks buffer, sized again by sizePicks.
  void addLogitPicks() {
    for (Operation &argmax : graph.operations) {
      if (argmax.kind != OpKind::Argmax || argmax.picks != kNoBuffer)
        continue;
      for (Operation &logits : graph.operations)
        if (logits.kind == OpKind::Gemv && logits.output == argmax.input) {
          graph.buffers.push_back({logits.name + ".picks", BufferKind::Scratch, 0});
          argmax.picks = logits.picks = graph.buffers.size() - 1;
        }
    }
  }

  // A pair (value, index) per tile and row of the step, for both the Gemv
  // and the Argmax.
  void sizePicks(uint32_t picks, uint64_t tiles) {
    graph.buffers[picks].elements = static_cast<uint64_t>(graph.rows) * 2 * tiles;
    for (Operation &op : graph.operations)
      if (op.picks == picks)
        op.numPicks = static_cast<int64_t>(tiles);
  }

  // Reads, writes and weight bytes come from the kind's description, the
  // same that the validator checks and the executors run.
  void addTask(const TaskKindDescription &description, uint32_t opIndex, Tile tile,
               uint32_t ordinal, uint32_t trigger, std::vector<Wait> waits) {
    Task task;
    task.id = graph.tasks.size();
    task.kind = description.kind;
    task.op = opIndex;
    task.begin = tile.begin;
    task.end = tile.end;
    task.ordinal = ordinal;
    task.trigger = trigger;
    task.waits = std::move(waits);
    const Operation &op = graph.operations[opIndex];
    TaskFootprint footprint = description.footprint(graph, op, task);
    task.reads = std::move(footprint.reads);
    task.writes = std::move(footprint.writes);
    task.accumulates = std::move(footprint.accumulates);
    task.weightBytes = description.weightElements(op, task) * target.bytesPerWeight;
    ++graph.events[trigger].triggerCount;
    graph.tasks.push_back(std::move(task));
  }

  // How an operation is cut into tiles of one of its kinds.
  std::vector<Tile> tilesOf(TaskKind kind, uint32_t opIndex) const {
    const Operation &op = graph.operations[opIndex];
    std::vector<Tile> tiles;
    auto rows = [&](const std::vector<RowTile> &rowTiles) {
      for (const RowTile &tile : rowTiles)
        tiles.push_back({tile.first, tile.second});
    };
    uint64_t kvHeads = op.numKvHeads;
    switch (kind) {
    case TaskKind::Embed:
      rows(tileRows(op.outputLength, {}, ceilDiv(op.outputLength, kEmbedRowsPerTile)));
      break;
    case TaskKind::Gemv:
      if (!projectsByHead(op))
        rows(tileRows(op.outputLength, gemvCuts(opIndex), gemvTiles(op)));
      break;
    case TaskKind::HeadProjection:
      // Each head's rows in tiles of sliceWidth (the head in the high bits:
      // core/protocol/AttentionLayout.h).
      if (projectsByHead(op))
        for (uint64_t h = 0; h < static_cast<uint64_t>(op.numHeads); ++h)
          for (uint64_t r = 0; r < op.outputLength; r += op.sliceWidth)
            tiles.push_back({headTileBound(h, r),
                             headTileBound(h, std::min(op.outputLength, r + op.sliceWidth))});
      break;
    case TaskKind::AttentionMerge: {
      // At most MK_MERGE_TILE_ELEMENTS of one q head's dimensions a tile
      // (core/protocol/AttentionLayout.h), or, for an inline merge, the
      // whole of a KV head's q heads; none where the reader merges.
      const uint64_t headDim = op.headDim, heads = op.numHeads;
      if (mergedByReader(op))
        break;
      if (target.inlineMerge) {
        const uint64_t groupLength = heads / kvHeads * headDim;
        for (uint64_t g = 0; g < kvHeads; ++g)
          tiles.push_back({g * groupLength, (g + 1) * groupLength});
        break;
      }
      const uint64_t parts = ceilDiv(headDim, MK_MERGE_TILE_ELEMENTS);
      for (uint64_t h = 0; h < heads; ++h)
        for (uint64_t p = 0; p < parts; ++p)
          tiles.push_back({h * headDim + p * headDim / parts, h * headDim + (p + 1) * headDim / parts});
      break;
    }
    case TaskKind::AttentionChunk:
      for (uint64_t g = 0; g < kvHeads; ++g)
        for (uint64_t c = 0; c < static_cast<uint64_t>(op.numChunks); ++c)
          tiles.push_back({g, c});
      break;
    case TaskKind::Argmax:
      tiles.push_back({0, op.inputLength});
      break;
    case TaskKind::Mlp: {
      uint64_t channels = op.weights[0].rows, width = op.sliceWidth;
      for (uint64_t begin = 0; begin < channels; begin += width)
        tiles.push_back({begin, std::min(channels, begin + width)});
      break;
    }
    case TaskKind::AllReduce:
      // Rows as the gemv before it cuts them, so that a tile waits only on
      // the partial sums it adds (chunkDependencies narrows it to them).
      rows(tileRows(op.outputLength, {}, target.numSms));
      break;
    }
    return tiles;
  }

  // The op writing each buffer the operation reads; an op at or after it
  // wrote it in the previous step (the token, written by the argmax).
  std::vector<Wait> inputWaits(uint32_t consumer) const {
    const Operation &reader = graph.operations[consumer];
    std::vector<uint32_t> buffers = {reader.input};
    if ((reader.kind == OpKind::Gemv && reader.epilogue == Epilogue::Residual) ||
        reader.kind == OpKind::AllReduce)
      buffers.push_back(reader.residual);
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

  // How many tiles a Gemv is cut into: one an SM, or fewer where its
  // weights would give a tile less than target.leastGemvTileBytes.
  uint64_t gemvTiles(const Operation &op) const {
    if (target.leastGemvTileBytes == 0)
      return target.numSms;
    Task whole;
    whole.begin = 0;
    whole.end = op.outputLength;
    const uint64_t bytes = describeKind(TaskKind::Gemv).weightElements(op, whole) *
                           target.bytesPerWeight;
    return std::clamp<uint64_t>(bytes / target.leastGemvTileBytes, 1, target.numSms);
  }

  // Where a tile may not cross: between two stacked weights, and, when the
  // output is an attention's q | k | v, between two KV groups' rows.
  std::vector<uint64_t> gemvCuts(uint32_t opIndex) const {
    const Operation &op = graph.operations[opIndex];
    std::vector<uint64_t> cuts;
    if (isGated(op.epilogue))
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

  TaskGraph &graph;
  const TargetDescription &target;
  std::vector<uint32_t> outputEvent; // per operation: the event its output is ready on
};

} // namespace

int64_t attentionChunksPerRound(int64_t numKvHeads, uint32_t numSms) {
  uint64_t kvHeads = std::max<int64_t>(numKvHeads, 1);
  return static_cast<int64_t>(std::max<uint64_t>(numSms / kvHeads, 1));
}

int64_t attentionChunkSize(int64_t maxContext, int64_t numKvHeads, uint32_t numSms,
                           uint64_t longestChunk) {
  // The context cut evenly into `chunks`, rounded up to the span grain (a
  // span is whole rounds of the device's key loads: AttentionLayout.h).
  const uint64_t context = std::max<int64_t>(maxContext, 1);
  auto sizeFor = [&](uint64_t chunks) { return roundUp(ceilDiv(context, chunks), kSpanGrain); };
  uint64_t chunksPerKvHead =
      std::min<uint64_t>(attentionChunksPerRound(numKvHeads, numSms), kMostChunks);
  uint64_t longest = std::max(longestChunk / kSpanGrain * kSpanGrain, kShortestChunk);
  uint64_t size = std::max(sizeFor(chunksPerKvHead), kShortestChunk);
  // Past the longest chunk: as few chunks as it allows, evened out (a
  // context of 40000 at 2048: 20 chunks of 2000, not 19 of 2048 and one of
  // 1088), at most kMostChunks (then chunks grow past the longest).
  if (size > longest)
    size = sizeFor(std::min(ceilDiv(context, longest), kMostChunks));
  return static_cast<int64_t>(size);
}

int64_t longestAttentionChunkFor(int64_t group, uint64_t longestChunk) {
  uint64_t fits = kMostScoreFloats / static_cast<uint64_t>(std::max<int64_t>(group, 1));
  return static_cast<int64_t>(std::min(longestChunk, std::max(fits / kSpanGrain * kSpanGrain,
                                                              kShortestChunk)));
}

void cutAttentionIntoChunks(Operation &op, int64_t maxContext, const TargetDescription &target) {
  int64_t group = op.numKvHeads > 0 ? op.numHeads / op.numKvHeads : 1;
  // A sliding window shorter than the context: the chunks cover the window.
  int64_t reach = attentionReach(maxContext, op.window);
  op.chunkSize = attentionChunkSize(reach, op.numKvHeads, target.numSms,
                                    longestAttentionChunkFor(group, target.longestAttentionChunk));
  op.numChunks = (reach + op.chunkSize - 1) / op.chunkSize;
  op.chunksPerRound = std::min(op.numChunks, attentionChunksPerRound(op.numKvHeads, target.numSms));
}

void tileOperations(TaskGraph &graph, const TargetDescription &target) {
  graph.tasks.clear();
  graph.events.clear();
  Emitter(graph, target).run();
}

} // namespace mk
