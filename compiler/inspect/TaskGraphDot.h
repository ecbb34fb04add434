// The task graph as Graphviz DOT: tasks are boxes grouped in one cluster per
// operation, events are ellipses between the tasks that trigger them and
// those that wait on them. A whole model is too big to draw, so a layer can
// be drawn alone: its tasks, the events they trigger, and the events they
// wait on from outside it (dashed).
#ifndef MKC_COMPILER_INSPECT_TASKGRAPHDOT_H
#define MKC_COMPILER_INSPECT_TASKGRAPHDOT_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <optional>
#include <ostream>

namespace mk {

// `layer`: only that layer's tasks (-1: those outside the layers);
// std::nullopt: every task.
void printDot(std::ostream &os, const TaskGraph &graph, std::optional<int32_t> layer);

} // namespace mk

#endif
