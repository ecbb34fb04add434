// A task's short label, as `mkc inspect` prints it: its operation and its
// tile as its kind's description names it (core/taskgraph/TaskKind.h).
#ifndef MKC_COMPILER_INSPECT_TASKLABELS_H
#define MKC_COMPILER_INSPECT_TASKLABELS_H

#include "core/taskgraph/TaskGraph.h"

#include <string>

namespace mk {

// "layer0.qkv rows [0, 26)", "layer0.attention kv head 1, chunk 3", "argmax"
std::string taskLabel(const TaskGraph &graph, const Task &task);

} // namespace mk

#endif
