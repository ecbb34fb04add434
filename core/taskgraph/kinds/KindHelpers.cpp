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

std::string describeHeadElements(const Task &task) {
  return "output [" + std::to_string(task.begin) + ", " + std::to_string(task.end) + ")";
}

std::string checkHeadElements(const Operation &op, const Task &task) {
  const uint64_t headDim = static_cast<uint64_t>(op.headDim);
  const uint64_t length = static_cast<uint64_t>(op.numHeads) * headDim;
  if (headDim == 0 || task.begin >= task.end || task.end > length)
    return "its output is not a non-empty part of the operation's " + std::to_string(length) +
           " elements";
  const bool wholeHeads = task.begin % headDim == 0 && task.end % headDim == 0;
  if (!wholeHeads && task.begin / headDim != (task.end - 1) / headDim)
    return "its output [" + std::to_string(task.begin) + ", " + std::to_string(task.end) +
           ") is neither whole q heads nor part of one";
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
