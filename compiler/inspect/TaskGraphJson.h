// The task graph and its schedule as one JSON document, for tools outside
// mkc (plots, diffing two compilations). Every field of TaskGraph.h appears
// under its own name; enums are lower-case words.
#ifndef MKC_COMPILER_INSPECT_TASKGRAPHJSON_H
#define MKC_COMPILER_INSPECT_TASKGRAPHJSON_H

#include "core/taskgraph/TaskGraph.h"

#include <ostream>

namespace mk {

// `schedule` may be null.
void printJson(std::ostream &os, const TaskGraph &graph, const Schedule *schedule);

} // namespace mk

#endif
