#include "compiler/inspect/TaskLabels.h"

namespace mk {

std::string taskLabel(const TaskGraph &graph, const Task &task) {
  const std::string &op = graph.operations[task.op].name;
  auto rows = [&] {
    return " rows [" + std::to_string(task.begin) + ", " + std::to_string(task.end) + ")";
  };
  switch (task.kind) {
  case TaskKind::Embed:
  case TaskKind::Gemv:
    return op + rows();
  case TaskKind::AttentionPrepare:
    return op + " prepare kv " + std::to_string(task.begin);
  case TaskKind::AttentionChunk:
    return op + " chunk kv " + std::to_string(task.begin) + " chunk " + std::to_string(task.end);
  case TaskKind::AttentionMerge:
    return op + " merge kv " + std::to_string(task.begin);
  case TaskKind::Argmax:
    return op;
  }
  return op;
}

} // namespace mk
