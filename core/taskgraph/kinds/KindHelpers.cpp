#include "core/taskgraph/kinds/KindHelpers.h"

namespace mk::kinds {

std::string describeRows(const Task &task) {
  return "rows [" + std::to_string(task.begin) + ", " + std::to_string(task.end) + ")";
}

std::string checkRows(const Operation &op, const Task &task) {
  if (task.begin >= task.end || task.end > op.outputLength)
    return "its rows are not a non-empty part of the operation's " +
           std::to_string(op.outputLength) + " rows";
  return "";
}

std::string describeKvHead(const Task &task) { return "kv head " + std::to_string(task.begin); }

std::string checkKvHead(const Operation &op, const Task &task) {
  if (task.begin >= static_cast<uint64_t>(op.numKvHeads))
    return "names a KV head outside the operation's " + std::to_string(op.numKvHeads);
  return "";
}

uint64_t noElements(const Operation &, const Task &) { return 0; }

} // namespace mk::kinds
