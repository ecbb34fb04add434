// Where the attention tasks of one operation find their data: the q heads of
// KV head g are heads [g * headsPerGroup, (g + 1) * headsPerGroup), and a
// chunk's partial result for a head is [o (headDim), max, sum].
#ifndef MKC_RUNTIME_CPU_ATTENTIONLAYOUT_H
#define MKC_RUNTIME_CPU_ATTENTIONLAYOUT_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>

namespace mk::cpu {

struct AttentionLayout {
  explicit AttentionLayout(const Operation &op)
      : numHeads(op.numHeads), numKvHeads(op.numKvHeads), headDim(op.headDim),
        headsPerGroup(op.numHeads / op.numKvHeads), numChunks(op.numChunks),
        chunkSize(op.chunkSize) {}

  uint64_t groupQueryOffset(uint64_t group) const { return group * groupQueryLength(); }
  uint64_t groupQueryLength() const { return headsPerGroup * headDim; }
  uint64_t keyOffset(uint64_t group) const { return (numHeads + group) * headDim; }
  uint64_t valueOffset(uint64_t group) const { return (numHeads + numKvHeads + group) * headDim; }

  static constexpr uint64_t kMax = 0, kSum = 1; // after the headDim entries of o
  uint64_t partialLength() const { return headDim + 2; }
  uint64_t partialOffset(uint64_t head, uint64_t chunk) const {
    return (head * numChunks + chunk) * partialLength();
  }

  uint64_t numHeads, numKvHeads, headDim, headsPerGroup, numChunks, chunkSize;
};

} // namespace mk::cpu

#endif
