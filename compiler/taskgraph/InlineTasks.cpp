#include "compiler/taskgraph/InlineTasks.h"

#include <vector>

namespace mk {

uint32_t inlineAttentionMerges(TaskGraph &graph) {
  std::vector<bool> followed(graph.events.size(), false);
  for (const Task &task : graph.tasks)
    if (task.runsInline)
      followed[task.waits[0].event] = true;
  uint32_t marked = 0;
  for (Task &task : graph.tasks) {
    if (task.kind != TaskKind::AttentionMerge || task.runsInline || task.waits.size() != 1)
      continue;
    const Wait &wait = task.waits[0];
    if (wait.stepOffset != 0 || wait.allRanks || followed[wait.event])
      continue;
    task.runsInline = followed[wait.event] = true;
    ++marked;
  }
  return marked;
}

} // namespace mk
