// AttentionChunk: KV head `begin`, chunk `end`: the positions the chunk
// covers at the step (at most chunkSize of them, by attentionChunkPositions
// in core/protocol/AttentionLayout.h; with a sliding window, of the
// window's positions only). Each chunk normalizes and rotates its
// group's q heads itself, and this step's k when it holds the step's
// position, so no phase of its own stands between the qkv gemv and the
// chunks; each q head of the group gets the chunk's partial result
// [o, max, sum]. Chunk 0, which runs at every position, writes this step's
// k and v into the caches' slots for the steps after; the chunk holding
// the position uses them from shared memory, so no chunk reads the slot
// written this step. With several rows a step, each row attends to its own
// sequence up to its own position; a row reads the k and v of the step's
// other rows (a prefill chunk's earlier positions) from the q | k | v input,
// as computed, and chunk 0 writes every row's slot.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

std::string describeTile(const Task &task) {
  return "kv head " + std::to_string(task.begin) + ", chunk " + std::to_string(task.end);
}

std::string checkTile(const Operation &op, const Task &task) {
  if (task.begin >= static_cast<uint64_t>(op.numKvHeads) ||
      task.end >= static_cast<uint64_t>(op.numChunks))
    return "names a KV head or chunk outside the operation's " + std::to_string(op.numKvHeads) +
           " KV heads and " + std::to_string(op.numChunks) + " chunks";
  return "";
}

TaskFootprint footprint(const TaskGraph &graph, const Operation &op, const Task &task) {
  AttentionLayout layout = attentionLayout(op);
  uint64_t head = task.begin;
  TaskFootprint footprint;
  addRowRanges(footprint.reads, graph, op.input, layout.query(head), layout.groupLength());
  addRowRanges(footprint.reads, graph, op.input, layout.key(head), layout.headDim);
  addRowRanges(footprint.reads, graph, op.input, layout.value(head), layout.headDim);
  if (task.end == 0)
    for (uint32_t cache : {op.keyCache, op.valueCache})
      addRowRanges(footprint.writes, graph, cache, slotLength(graph, graph.buffers[cache]),
                   layout.slot(head), layout.headDim);
  for (uint64_t q = head * layout.group; q < (head + 1) * layout.group; ++q)
    addRowRanges(footprint.writes, graph, op.partials, layout.partial(q, task.end),
                 layout.partialLength());
  return footprint;
}

// The q and k norm vectors, which every chunk reads.
uint64_t weightElements(const Operation &op, const Task &) {
  return (op.qNorm.name.empty() ? 0 : op.headDim) + (op.kNorm.name.empty() ? 0 : op.headDim);
}

// At most a whole chunk of keys and values: the most a chunk covers.
uint64_t cacheElements(const Operation &op, const Task &) { return 2 * op.chunkSize * op.headDim; }

// The chunk's index: chunk c has positions only once the step's position
// reaches c spans (core/protocol/AttentionLayout.h).
uint64_t positionRank(const Task &task) { return task.end; }

std::vector<int64_t> variant(const TaskGraph &graph, const Operation &op) {
  return {op.headDim, op.numHeads / op.numKvHeads, op.chunkSize, op.rotaryDim,
          static_cast<int64_t>(bytesPerElement(graph.buffers[op.keyCache].element)), graph.rows};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return attentionChunkSharedFloats(v[0], v[1], v[2], v[3], v[4], v[5]);
}

} // namespace

extern const TaskKindDescription kAttentionChunkKind = {
    .kind = TaskKind::AttentionChunk,
    .name = "AttentionChunk",
    .operation = OpKind::Attention,
    .phaseEvent = "chunk",
    .describeTile = describeTile,
    .checkTile = checkTile,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = cacheElements,
    .positionRank = positionRank,
    .deviceFunction = "attentionChunkTask",
    .variantParameters = {{"headDim"}, {"group"}, {"chunk"}, {"rotaryDim"}, {"cacheBytes"},
                          {"rows"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::attentionChunkSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
