#include "core/taskgraph/TaskFootprint.h"

#include "core/taskgraph/TaskKind.h"

#include <algorithm>

namespace mk {

TaskFootprint deriveFootprint(const TaskGraph &graph, const Task &task) {
  return describeKind(task.kind).footprint(graph, graph.operations[task.op], task);
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
