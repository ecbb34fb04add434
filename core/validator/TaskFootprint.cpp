#include "core/validator/TaskFootprint.h"

#include <algorithm>

namespace mk {

namespace {

struct AttentionLayout {
  uint64_t headsPerGroup, headDim, numHeads, numKvHeads, numChunks;

  explicit AttentionLayout(const Operation &op)
      : headsPerGroup(op.numHeads / op.numKvHeads), headDim(op.headDim), numHeads(op.numHeads),
        numKvHeads(op.numKvHeads), numChunks(op.numChunks) {}

  // The q heads of KV head `group`, in q-sized buffers (q, roped q, output).
  BufferRange queries(uint32_t buffer, uint64_t group) const {
    uint64_t length = headsPerGroup * headDim;
    return {buffer, group * length, (group + 1) * length};
  }
  // Head `group` of the k (part 1) or v (part 2) section of q | k | v.
  BufferRange keyOrValue(uint32_t buffer, uint64_t group, uint64_t part) const {
    uint64_t begin = (numHeads + (part - 1) * numKvHeads + group) * headDim;
    return {buffer, begin, begin + headDim};
  }
  BufferRange slot(uint32_t cache, uint64_t group) const {
    return {cache, group * headDim, (group + 1) * headDim};
  }
  uint64_t partialLength() const { return headDim + 2; }
  BufferRange partial(uint32_t buffer, uint64_t head, uint64_t chunk) const {
    uint64_t begin = (head * numChunks + chunk) * partialLength();
    return {buffer, begin, begin + partialLength()};
  }
  BufferRange groupPartials(uint32_t buffer, uint64_t group) const {
    uint64_t length = headsPerGroup * numChunks * partialLength();
    return {buffer, group * length, (group + 1) * length};
  }
};

} // namespace

TaskFootprint deriveFootprint(const TaskGraph &graph, const Task &task) {
  const Operation &op = graph.operations[task.op];
  TaskFootprint footprint;
  auto &reads = footprint.reads;
  auto &writes = footprint.writes;
  switch (task.kind) {
  case TaskKind::Embed:
    reads.push_back({op.input, 0, 1});
    writes.push_back({op.output, task.begin, task.end});
    break;
  case TaskKind::Gemv:
    reads.push_back({op.input, 0, op.inputLength});
    if (op.epilogue == Epilogue::Residual)
      reads.push_back({op.residual, task.begin, task.end});
    writes.push_back({op.output, task.begin, task.end});
    break;
  case TaskKind::AttentionPrepare: {
    AttentionLayout layout(op);
    reads.push_back(layout.queries(op.input, task.begin));
    reads.push_back(layout.keyOrValue(op.input, task.begin, 1));
    reads.push_back(layout.keyOrValue(op.input, task.begin, 2));
    writes.push_back(layout.queries(op.roped, task.begin));
    writes.push_back(layout.slot(op.keyCache, task.begin));
    writes.push_back(layout.slot(op.valueCache, task.begin));
    break;
  }
  case TaskKind::AttentionChunk: {
    // Any chunk may hold the step's position, so each may read this step's
    // slot.
    AttentionLayout layout(op);
    reads.push_back(layout.queries(op.roped, task.begin));
    reads.push_back(layout.slot(op.keyCache, task.begin));
    reads.push_back(layout.slot(op.valueCache, task.begin));
    for (uint64_t head = task.begin * layout.headsPerGroup;
         head < (task.begin + 1) * layout.headsPerGroup; ++head)
      writes.push_back(layout.partial(op.partials, head, task.end));
    break;
  }
  case TaskKind::AttentionMerge: {
    AttentionLayout layout(op);
    reads.push_back(layout.groupPartials(op.partials, task.begin));
    writes.push_back(layout.queries(op.output, task.begin));
    break;
  }
  case TaskKind::Argmax:
    reads.push_back({op.input, 0, graph.buffers[op.input].elements});
    writes.push_back({op.output, 0, 1});
    break;
  }
  return footprint;
}

std::vector<BufferRange> normalizeRanges(std::vector<BufferRange> ranges) {
  std::erase_if(ranges, [](const BufferRange &range) { return range.begin >= range.end; });
  std::sort(ranges.begin(), ranges.end(), [](const BufferRange &a, const BufferRange &b) {
    return a.buffer != b.buffer ? a.buffer < b.buffer : a.begin < b.begin;
  });
  std::vector<BufferRange> merged;
  for (const BufferRange &range : ranges) {
    if (!merged.empty() && merged.back().buffer == range.buffer &&
        range.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, range.end);
    else
      merged.push_back(range);
  }
  return merged;
}

bool rangesCover(const std::vector<BufferRange> &normalized, const BufferRange &range) {
  if (range.begin >= range.end)
    return true;
  return std::any_of(normalized.begin(), normalized.end(), [&](const BufferRange &held) {
    return held.buffer == range.buffer && held.begin <= range.begin && range.end <= held.end;
  });
}

} // namespace mk
