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

std::vector<std::vector<Producer>> producersOfReads(const TaskGraph &graph) {
  struct Write {
    uint32_t task;
    uint64_t begin, end;
    bool adds; // an addition into a Fixed64 buffer (Task::accumulates)
  };
  std::vector<std::vector<Write>> writes(graph.buffers.size());
  for (const Task &task : graph.tasks)
    for (const auto *ranges : {&task.writes, &task.accumulates})
      for (const BufferRange &range : *ranges)
        if (range.buffer < writes.size())
          writes[range.buffer].push_back(
              {task.id, range.begin, range.end, ranges == &task.accumulates});

  std::vector<std::vector<Producer>> producers(graph.tasks.size());
  for (const Task &task : graph.tasks) {
    auto &list = producers[task.id];
    // A reader needs every writer and every addition; an addition needs the
    // seed written before it, but not the other additions.
    for (const auto *ranges : {&task.reads, &task.accumulates})
      for (const BufferRange &read : *ranges) {
        if (read.buffer >= writes.size())
          continue;
        for (const Write &write : writes[read.buffer])
          if (write.task != task.id && write.begin < read.end && read.begin < write.end &&
              !(write.adds && ranges == &task.accumulates))
            list.push_back({write.task, write.task < task.id ? 0 : -1});
      }
    std::sort(list.begin(), list.end(), [](const Producer &a, const Producer &b) {
      return a.task != b.task ? a.task < b.task : a.stepOffset < b.stepOffset;
    });
    list.erase(std::unique(list.begin(), list.end(),
                           [](const Producer &a, const Producer &b) {
                             return a.task == b.task && a.stepOffset == b.stepOffset;
                           }),
               list.end());
  }
  return producers;
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
