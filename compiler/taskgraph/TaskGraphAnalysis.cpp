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

namespace {

// A buffer's writes of one step, sorted by their first element, with the
// furthest end of any write up to each: the writes overlapping a range are
// found from the last one starting before its end, backwards until no
// earlier write reaches its begin. A step of many rows has many ranges a
// buffer, and a scan of them all per read grew with the rows squared.
class WritesOfBuffer {
public:
  struct Write {
    uint64_t begin, end;
    uint32_t task;
    bool adds; // an addition into a Fixed64 buffer (Task::accumulates)
  };

  void add(const Write &write) { writes.push_back(write); }

  void index() {
    std::sort(writes.begin(), writes.end(),
              [](const Write &a, const Write &b) { return a.begin < b.begin; });
    reach.resize(writes.size());
    uint64_t furthest = 0;
    for (size_t i = 0; i < writes.size(); ++i)
      reach[i] = furthest = std::max(furthest, writes[i].end);
  }

  template <class Visit> void forEachOverlapping(const BufferRange &range, Visit visit) const {
    auto after = std::lower_bound(writes.begin(), writes.end(), range.end,
                                  [](const Write &write, uint64_t end) { return write.begin < end; });
    for (size_t i = static_cast<size_t>(after - writes.begin()); i-- > 0;) {
      if (reach[i] <= range.begin)
        break;
      if (writes[i].end > range.begin)
        visit(writes[i]);
    }
  }

private:
  std::vector<Write> writes;
  std::vector<uint64_t> reach;
};

} // namespace

std::vector<std::vector<Producer>> producersOfReads(const TaskGraph &graph) {
  std::vector<WritesOfBuffer> writes(graph.buffers.size());
  for (const Task &task : graph.tasks)
    for (const auto *ranges : {&task.writes, &task.accumulates})
      for (const BufferRange &range : *ranges)
        if (range.buffer < writes.size() && range.begin < range.end)
          writes[range.buffer].add(
              {range.begin, range.end, task.id, ranges == &task.accumulates});
  for (WritesOfBuffer &buffer : writes)
    buffer.index();

  std::vector<std::vector<Producer>> producers(graph.tasks.size());
  // The reader (plus one) that last listed each task: a producer once a reader.
  std::vector<uint64_t> listedFor(graph.tasks.size(), 0);
  for (const Task &task : graph.tasks) {
    auto &list = producers[task.id];
    // A reader needs every writer and every addition; an addition needs the
    // seed written before it, but not the other additions.
    for (const auto *ranges : {&task.reads, &task.accumulates})
      for (const BufferRange &read : *ranges) {
        if (read.buffer >= writes.size())
          continue;
        writes[read.buffer].forEachOverlapping(read, [&](const WritesOfBuffer::Write &write) {
          if (write.task == task.id || (write.adds && ranges == &task.accumulates) ||
              write.task >= listedFor.size() || listedFor[write.task] == task.id + 1ull)
            return;
          listedFor[write.task] = task.id + 1ull;
          list.push_back({write.task, write.task < task.id ? 0 : -1});
        });
      }
    std::sort(list.begin(), list.end(), [](const Producer &a, const Producer &b) {
      return a.task != b.task ? a.task < b.task : a.stepOffset < b.stepOffset;
    });
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
