// AttentionChunk: KV head `begin`, chunk `end`: positions
// [end * chunkSize, (end + 1) * chunkSize) up to the step's. Each q head of
// the group gets the chunk's partial result [o, max, sum]. Any chunk may
// hold the step's position, so each reads this step's slot.
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

TaskFootprint footprint(const TaskGraph &, const Operation &op, const Task &task) {
  AttentionLayout layout = attentionLayout(op);
  uint64_t head = task.begin;
  TaskFootprint footprint{{rangeOf(op.roped, layout.query(head), layout.groupLength()),
                           rangeOf(op.keyCache, layout.slot(head), layout.headDim),
                           rangeOf(op.valueCache, layout.slot(head), layout.headDim)},
                          {}};
  for (uint64_t q = head * layout.group; q < (head + 1) * layout.group; ++q)
    footprint.writes.push_back(
        rangeOf(op.partials, layout.partial(q, task.end), layout.partialLength()));
  return footprint;
}

// A whole chunk of keys and values.
uint64_t cacheElements(const Operation &op, const Task &) { return 2 * op.chunkSize * op.headDim; }

std::vector<int64_t> variant(const Operation &op) {
  return {op.headDim, op.numHeads / op.numKvHeads, op.chunkSize};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return attentionChunkSharedFloats(v[0], v[1], v[2]);
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
    .weightElements = noElements,
    .cacheElements = cacheElements,
    .deviceFunction = "attentionChunkTask",
    .variantParameters = {{"headDim"}, {"group"}, {"chunk"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::attentionChunkSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
