#include "core/validator/Ancestry.h"

#include "core/validator/ValidatorChecks.h"

#include <bit>

namespace mk::validation {

void TaskSet::insertAll(const TaskSet &other) {
  for (size_t i = 0; i < words.size(); ++i)
    words[i] |= other.words[i];
}

size_t TaskSet::firstMissing() const {
  for (size_t i = 0; i < words.size(); ++i)
    if (~words[i] != 0) {
      size_t task = i * 64 + std::countr_zero(~words[i]);
      return task < size ? task : size;
    }
  return size;
}

std::string Ancestry::build(const TaskGraph &graph, Ancestry &ancestry) {
  size_t numTasks = graph.tasks.size();
  std::vector<bool> waitedOn(graph.events.size());
  uint64_t sets = 0;
  for (const Task &task : graph.tasks)
    for (const Wait &wait : task.waits)
      if (wait.stepOffset == 0 && !waitedOn[wait.event]) {
        waitedOn[wait.event] = true;
        ++sets;
      }
  // 20k tasks with 20k waited-on events take 50 MB; a graph past 4 GiB is
  // refused rather than half-checked.
  constexpr uint64_t maxBytes = uint64_t(4) << 30;
  uint64_t bytes = 0;
  if (!multiply(sets, (numTasks + 63) / 64 * 8, bytes) || bytes > maxBytes)
    return cat("the graph is too large to validate: ", sets, " waited-on events x ", numTasks,
               " tasks of happens-before sets");

  ancestry.graph = &graph;
  ancestry.eventAncestors.assign(graph.events.size(), TaskSet());
  for (size_t event = 0; event < graph.events.size(); ++event)
    if (waitedOn[event])
      ancestry.eventAncestors[event] = TaskSet(numTasks);
  // The list is topological, so every trigger of an event is done before
  // the first task that waits on it is reached.
  for (uint32_t id = 0; id < numTasks; ++id) {
    uint32_t trigger = graph.tasks[id].trigger;
    if (!waitedOn[trigger])
      continue;
    TaskSet &set = ancestry.eventAncestors[trigger];
    set.insertAll(ancestry.ancestorsOf(id));
    set.insert(id);
  }
  return "";
}

TaskSet Ancestry::ancestorsOf(uint32_t task) const {
  TaskSet ancestors(graph->tasks.size());
  for (const Wait &wait : graph->tasks[task].waits)
    if (wait.stepOffset == 0)
      ancestors.insertAll(eventAncestors[wait.event]);
  return ancestors;
}

} // namespace mk::validation
