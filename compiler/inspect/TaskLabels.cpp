#include "compiler/inspect/TaskLabels.h"

#include "core/taskgraph/TaskKind.h"

namespace mk {

std::string taskLabel(const TaskGraph &graph, const Task &task) {
  std::string label = graph.operations[task.op].name;
  std::string tile = describeKind(task.kind).describeTile(task);
  return tile.empty() ? label : label + " " + tile;
}

} // namespace mk
