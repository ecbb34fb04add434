// AttentionPrepare: KV head `begin`. Its q heads and k get their head norms
// and rotary; the roped q goes to scratch for the chunks, k and v to the
// caches' slots at the step's position.
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

namespace {

TaskFootprint footprint(const TaskGraph &, const Operation &op, const Task &task) {
  AttentionLayout layout = attentionLayout(op);
  uint64_t head = task.begin;
  return {{rangeOf(op.input, layout.query(head), layout.groupLength()),
           rangeOf(op.input, layout.key(head), layout.headDim),
           rangeOf(op.input, layout.value(head), layout.headDim)},
          {rangeOf(op.roped, layout.query(head), layout.groupLength()),
           rangeOf(op.keyCache, layout.slot(head), layout.headDim),
           rangeOf(op.valueCache, layout.slot(head), layout.headDim)}};
}

// The q and k norm vectors.
uint64_t weightElements(const Operation &op, const Task &) {
  return (op.qNorm.name.empty() ? 0 : op.headDim) + (op.kNorm.name.empty() ? 0 : op.headDim);
}

std::vector<int64_t> variant(const Operation &op) {
  return {op.headDim, op.numHeads / op.numKvHeads, op.rotaryDim};
}

uint64_t sharedFloats(const std::vector<int64_t> &v) {
  return attentionPrepareSharedFloats(v[0], v[1], v[2]);
}

} // namespace

extern const TaskKindDescription kAttentionPrepareKind = {
    .kind = TaskKind::AttentionPrepare,
    .name = "AttentionPrepare",
    .operation = OpKind::Attention,
    .phaseEvent = "prepare",
    .describeTile = describeKvHead,
    .checkTile = checkKvHead,
    .footprint = footprint,
    .weightElements = weightElements,
    .cacheElements = noElements,
    .deviceFunction = "attentionPrepareTask",
    .variantParameters = {{"headDim"}, {"group"}, {"rotaryDim"}},
    .variantArguments = variant,
    .kernelArguments = "kThreads",
    .sharedFloatsFunction = "mk::attentionPrepareSharedFloats",
    .sharedFloats = sharedFloats,
};

} // namespace mk::kinds
