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
  // The normal form is sorted and disjoint: only the last range starting at
  // or before `range` can hold it (a step of many rows has many ranges).
  auto after = std::upper_bound(normalized.begin(), normalized.end(), range,
                                [](const BufferRange &a, const BufferRange &b) {
                                  return a.buffer != b.buffer ? a.buffer < b.buffer
                                                              : a.begin < b.begin;
                                });
  if (after == normalized.begin())
    return false;
  const BufferRange &held = *(after - 1);
  return held.buffer == range.buffer && held.begin <= range.begin && range.end <= held.end;
}

} // namespace mk
