// What a task reads and writes in one step, derived from its kind's
// description (TaskKind.h), its operation and its tile: the accesses the
// executors make, whatever the task declares. Ranges of a KV cache are relative to the step's slot, as in
// Task::reads; reads of earlier positions are left out.
#ifndef MKC_CORE_TASKGRAPH_TASKFOOTPRINT_H
#define MKC_CORE_TASKGRAPH_TASKFOOTPRINT_H

#include "core/taskgraph/TaskGraph.h"

#include <vector>

namespace mk {

struct TaskFootprint {
  std::vector<BufferRange> reads, writes;
  // What the task adds into (Task::accumulates).
  std::vector<BufferRange> accumulates;
  // Tensor parallel: what the task reads of the same buffers on every other
  // rank (an AllReduce's partial sums), which its allRanks waits order.
  std::vector<BufferRange> peerReads;
};

// Assumes the task's kind, operation and tile are valid (validateStructure).
TaskFootprint deriveFootprint(const TaskGraph &graph, const Task &task);

// Sorted by buffer then begin, empty ranges dropped, overlapping or
// touching ranges of a buffer merged: two lists of ranges cover the same
// elements exactly when their normal forms are equal.
std::vector<BufferRange> normalizeRanges(std::vector<BufferRange> ranges);

// Whether every element of `range` is in `normalized` (a normal form).
bool rangesCover(const std::vector<BufferRange> &normalized, const BufferRange &range);

} // namespace mk

#endif
