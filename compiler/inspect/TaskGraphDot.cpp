#include "compiler/inspect/TaskGraphDot.h"

#include "compiler/inspect/TaskGraphText.h"
#include "compiler/inspect/TaskLabels.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/TaskNames.h"

#include <set>
#include <string>

namespace mk {

namespace {

// DOT strings take C-like escapes; names come from the model's weights and
// may hold anything.
std::string escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string quoted(const std::string &text) { return "\"" + escaped(text) + "\""; }

// The kind and the tile: the operation is the node's cluster.
std::string tileLabel(const Task &task) {
  std::string tile = describeKind(task.kind).describeTile(task);
  return std::string(describeKind(task.kind).name) + (tile.empty() ? "" : " " + tile);
}

} // namespace

void printDot(std::ostream &os, const TaskGraph &graph, std::optional<int32_t> layer) {
  auto drawn = [&](const Task &task) {
    return !layer || graph.operations[task.op].layer == *layer;
  };
  std::set<uint32_t> triggered, waited;
  for (const Task &task : graph.tasks)
    if (drawn(task)) {
      triggered.insert(task.trigger);
      for (const Wait &wait : task.waits)
        waited.insert(wait.event);
    }

  os << "digraph " << quoted(layer ? "layer " + std::to_string(*layer) : "tasks") << " {\n"
     << "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11];\n"
     << "  node [fontname=\"Helvetica\", fontsize=9];\n"
     << "  edge [arrowsize=0.5];\n";

  for (uint32_t op = 0; op < graph.operations.size(); ++op) {
    bool any = false;
    for (const Task &task : graph.tasks) {
      if (task.op != op || !drawn(task))
        continue;
      if (!any)
        os << "  subgraph " << quoted("cluster_op" + std::to_string(op)) << " {\n"
           << "    label=" << quoted(graph.operations[op].name) << "; style=rounded;\n";
      any = true;
      std::string label = tileLabel(task);
      if (task.weightBytes)
        label += "\\n" + formatBytes(task.weightBytes);
      os << "    t" << task.id << " [shape=box, label=\"" << label << "\"];\n";
    }
    if (any)
      os << "  }\n";
  }

  for (const Event &event : graph.events) {
    bool inside = triggered.count(event.id), outside = !inside && waited.count(event.id);
    if (!inside && !outside)
      continue;
    os << "  e" << event.id << " [shape=ellipse, label=\"" << escaped(event.name) << "\\nx"
       << event.triggerCount << "\"" << (outside ? ", style=dashed" : "") << "];\n";
  }

  for (const Task &task : graph.tasks) {
    if (!drawn(task))
      continue;
    os << "  t" << task.id << " -> e" << task.trigger << ";\n";
    for (const Wait &wait : task.waits) {
      os << "  e" << wait.event << " -> t" << task.id;
      if (wait.stepOffset != 0)
        os << " [style=dashed, label=\"step " << wait.stepOffset << "\"]";
      os << ";\n";
    }
  }
  os << "}\n";
}

} // namespace mk
