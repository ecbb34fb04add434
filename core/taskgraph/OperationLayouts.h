// The data layout of an operation of the task graph, as every engine reads
// it (core/protocol/AttentionLayout.h, shared with the device).
#ifndef MKC_CORE_TASKGRAPH_OPERATIONLAYOUTS_H
#define MKC_CORE_TASKGRAPH_OPERATIONLAYOUTS_H

#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/TaskGraph.h"

namespace mk {

// Of an Attention operation; a validated one has numKvHeads > 0.
inline AttentionLayout attentionLayout(const Operation &op) {
  uint64_t group = op.numKvHeads > 0 ? op.numHeads / op.numKvHeads : 0;
  return {static_cast<uint64_t>(op.numHeads), static_cast<uint64_t>(op.numKvHeads),
          static_cast<uint64_t>(op.headDim), group, static_cast<uint64_t>(op.numChunks)};
}

} // namespace mk

#endif
