#include "compiler/taskgraph/ChunkDependencies.h"

#include "core/taskgraph/TaskKind.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace mk {

namespace {

// The same-step ancestors of every task, kept only for the `window` tasks
// before it (rounded out to whole words). That decides exactly whether a
// need spanning fewer than `window` tasks is implied through another one,
// because every task on a path between the two lies inside the window. A set
// holds only true ancestors, so a bit outside the window reads as "unknown".
class AncestorWindows {
public:
  AncestorWindows(const std::vector<std::vector<uint32_t>> &predecessors, uint64_t window)
      : firstWord(predecessors.size()), words(predecessors.size()),
        offset(predecessors.size()) {
    uint64_t total = 0;
    for (uint64_t task = 0; task < predecessors.size(); ++task) {
      firstWord[task] = (task > window ? task - window : 0) / 64;
      words[task] = task == 0 ? 0 : (task - 1) / 64 - firstWord[task] + 1;
      offset[task] = total;
      total += words[task];
    }
    bits.assign(total, 0);
    for (uint64_t task = 0; task < predecessors.size(); ++task)
      for (uint32_t predecessor : predecessors[task]) {
        set(task, predecessor);
        uint64_t low = std::max(firstWord[task], firstWord[predecessor]);
        uint64_t high = std::min(firstWord[task] + words[task],
                                 firstWord[predecessor] + words[predecessor]);
        for (uint64_t word = low; word < high; ++word)
          bits[offset[task] + word - firstWord[task]] |=
              bits[offset[predecessor] + word - firstWord[predecessor]];
      }
  }

  bool contains(uint64_t task, uint64_t ancestor) const {
    uint64_t word = ancestor / 64;
    if (ancestor >= task || word < firstWord[task] || word >= firstWord[task] + words[task])
      return false;
    return bits[offset[task] + word - firstWord[task]] >> (ancestor % 64) & 1;
  }

private:
  void set(uint64_t task, uint64_t ancestor) {
    uint64_t word = ancestor / 64;
    if (word >= firstWord[task] && word < firstWord[task] + words[task])
      bits[offset[task] + word - firstWord[task]] |= uint64_t(1) << (ancestor % 64);
  }

  std::vector<uint64_t> firstWord, words, offset, bits;
};

using Consumer = std::pair<uint32_t, int32_t>; // task, step offset of its wait

// The name of the event the task's kind triggers (TaskKind.h).
std::string phaseName(const TaskGraph &graph, const Task &task) {
  const std::string &op = graph.operations[task.op].name;
  const char *phase = describeKind(task.kind).phaseEvent;
  return phase ? op + "." + phase : op;
}

bool better(const DependencyStats &a, const DependencyStats &b) {
  auto key = [](const DependencyStats &s) {
    return std::tuple(s.criticalPathBytes, s.criticalPathTasks, s.waitedTasks, s.waits);
  };
  return key(a) < key(b);
}

} // namespace

DependencyReport chunkDependencies(TaskGraph &graph) {
  DependencyReport report;
  report.naive = dependencyStats(graph);
  uint32_t count = graph.tasks.size();

  auto needs = producersOfReads(graph);
  std::vector<std::vector<uint32_t>> predecessors(count);
  uint64_t window = 1;
  for (uint32_t task = 0; task < count; ++task)
    for (const Producer &need : needs[task])
      if (need.stepOffset == 0) {
        predecessors[task].push_back(need.task);
        window = std::max<uint64_t>(window, task - need.task + 1);
      }
  AncestorWindows ancestors(predecessors, window);

  // Split each consumer's needs into those that shape events and those
  // implied through another need.
  std::vector<std::vector<Consumer>> consumers(count);
  std::vector<std::vector<Producer>> shaping(count), implied(count);
  for (uint32_t task = 0; task < count; ++task)
    for (const Producer &need : needs[task]) {
      bool isImplied = need.stepOffset == 0 &&
                       std::any_of(predecessors[task].begin(), predecessors[task].end(),
                                   [&](uint32_t other) {
                                     return other > need.task &&
                                            ancestors.contains(other, need.task);
                                   });
      if (isImplied) {
        implied[task].push_back(need);
      } else {
        shaping[task].push_back(need);
        consumers[need.task].push_back({task, need.stepOffset});
      }
    }

  // One group per (phase of an operation, exact set of consumers).
  std::map<std::tuple<uint32_t, TaskKind, std::vector<Consumer>>, uint32_t> groupIds;
  std::vector<uint32_t> groupOf(count);
  std::vector<std::vector<uint32_t>> members;
  for (const Task &task : graph.tasks) {
    auto [it, inserted] =
        groupIds.try_emplace({task.op, task.kind, consumers[task.id]}, members.size());
    if (inserted)
      members.emplace_back();
    groupOf[task.id] = it->second;
    members[it->second].push_back(task.id);
  }

  std::map<std::string, uint32_t> groupsPerName, seenPerName;
  for (const auto &group : members)
    ++groupsPerName[phaseName(graph, graph.tasks[group.front()])];
  std::vector<Event> events;
  for (uint32_t group = 0; group < members.size(); ++group) {
    std::string name = phaseName(graph, graph.tasks[members[group].front()]);
    if (groupsPerName[name] > 1)
      name += "." + std::to_string(seenPerName[name]++);
    events.push_back({group, name, static_cast<uint32_t>(members[group].size())});
  }

  // An implied need's event is waited on only when that is free: every task
  // triggering it already precedes the consumer.
  auto precedes = [&](uint32_t group, uint32_t task) {
    const auto &tasks = members[group];
    if (std::all_of(tasks.begin(), tasks.end(),
                    [&](uint32_t member) { return ancestors.contains(task, member); }))
      return true;
    const auto &after = consumers[tasks.front()];
    return std::any_of(after.begin(), after.end(), [&](const Consumer &consumer) {
      return consumer.second == 0 && ancestors.contains(task, consumer.first);
    });
  };

  std::vector<Task> tasks = graph.tasks;
  for (Task &task : tasks) {
    task.trigger = groupOf[task.id];
    task.waits.clear();
    for (const Producer &need : shaping[task.id])
      task.waits.push_back({groupOf[need.task], need.stepOffset});
    for (const Producer &need : implied[task.id])
      if (precedes(groupOf[need.task], task.id))
        task.waits.push_back({groupOf[need.task], 0});
    std::sort(task.waits.begin(), task.waits.end(), [](const Wait &a, const Wait &b) {
      return a.event != b.event ? a.event < b.event : a.stepOffset < b.stepOffset;
    });
    task.waits.erase(std::unique(task.waits.begin(), task.waits.end(),
                                 [](const Wait &a, const Wait &b) {
                                   return a.event == b.event && a.stepOffset == b.stepOffset;
                                 }),
                     task.waits.end());
  }

  TaskGraph chunked = graph;
  chunked.tasks = std::move(tasks);
  chunked.events = std::move(events);
  report.chunked = dependencyStats(chunked);
  report.keptChunked = better(report.chunked, report.naive);
  if (report.keptChunked)
    graph = std::move(chunked);
  return report;
}

} // namespace mk
