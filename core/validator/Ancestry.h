// Happens-before within one step: task a happens before task b when b waits,
// through a chain of waits with step offset 0, on an event that a triggers.
// A wait on an event covers every task that triggers it, since the trigger
// counts match. Kept as one bitset of tasks per waited-on event, so a query
// costs a few words per wait rather than a walk of the graph.
#ifndef MKC_CORE_VALIDATOR_ANCESTRY_H
#define MKC_CORE_VALIDATOR_ANCESTRY_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk::validation {

class TaskSet {
public:
  explicit TaskSet(size_t size = 0) : words((size + 63) / 64), size(size) {}

  bool contains(uint32_t task) const { return words[task / 64] >> (task % 64) & 1; }
  void insert(uint32_t task) { words[task / 64] |= uint64_t(1) << (task % 64); }
  void insertAll(const TaskSet &other);
  // The first task in [0, size) that is not in the set, or size.
  size_t firstMissing() const;

private:
  std::vector<uint64_t> words;
  size_t size;
};

class Ancestry {
public:
  // Needs a valid structure and a topological task list; refuses graphs
  // whose sets would take more memory than is reasonable, with a message.
  static std::string build(const TaskGraph &graph, Ancestry &ancestry);

  // The tasks of the same step that happen before `task`.
  TaskSet ancestorsOf(uint32_t task) const;

private:
  const TaskGraph *graph = nullptr;
  // For events waited on with offset 0: the triggers and their ancestors.
  std::vector<TaskSet> eventAncestors;
};

} // namespace mk::validation

#endif
