#include "compiler/taskgraph/TaskGraphAnalysis.h"

#include <algorithm>

namespace mk {

std::vector<std::vector<uint32_t>> eventTriggers(const TaskGraph &graph) {
  std::vector<std::vector<uint32_t>> triggers(graph.events.size());
  for (const Task &task : graph.tasks)
    if (task.trigger < triggers.size())
      triggers[task.trigger].push_back(task.id);
  return triggers;
}

std::vector<std::vector<uint32_t>> sameStepPredecessors(const TaskGraph &graph) {
  auto triggers = eventTriggers(graph);
  std::vector<std::vector<uint32_t>> predecessors(graph.tasks.size());
  for (const Task &task : graph.tasks) {
    auto &list = predecessors[task.id];
    for (const Wait &wait : task.waits)
      if (wait.stepOffset == 0 && wait.event < triggers.size())
        list.insert(list.end(), triggers[wait.event].begin(), triggers[wait.event].end());
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return predecessors;
}

DependencyStats dependencyStats(const TaskGraph &graph) {
  DependencyStats stats;
  stats.events = graph.events.size();
  for (const Task &task : graph.tasks)
    for (const Wait &wait : task.waits) {
      ++stats.waits;
      if (wait.event < graph.events.size())
        stats.waitedTasks += graph.events[wait.event].triggerCount;
    }

  auto predecessors = sameStepPredecessors(graph);
  std::vector<uint64_t> chainTasks(graph.tasks.size()), chainBytes(graph.tasks.size());
  for (const Task &task : graph.tasks) {
    uint64_t tasks = 0, bytes = 0;
    for (uint32_t producer : predecessors[task.id]) {
      if (producer >= task.id)
        continue; // not a valid graph; the validator reports it
      tasks = std::max(tasks, chainTasks[producer]);
      bytes = std::max(bytes, chainBytes[producer]);
    }
    chainTasks[task.id] = tasks + 1;
    chainBytes[task.id] = bytes + task.weightBytes;
    stats.criticalPathTasks = std::max(stats.criticalPathTasks, chainTasks[task.id]);
    stats.criticalPathBytes = std::max(stats.criticalPathBytes, chainBytes[task.id]);
  }
  return stats;
}

} // namespace mk
