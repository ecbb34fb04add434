// Short names for the parts of a task graph, as `mkc inspect` prints them.
#ifndef MKC_COMPILER_INSPECT_TASKLABELS_H
#define MKC_COMPILER_INSPECT_TASKLABELS_H

#include "compiler/taskgraph/TaskGraph.h"

#include <string>

namespace mk {

const char *opKindLabel(OpKind kind);          // "gemv"
const char *taskKindLabel(TaskKind kind);      // "attention-chunk"
const char *bufferKindLabel(BufferKind kind);  // "kv-cache"
const char *epilogueLabel(Epilogue epilogue);  // "silu_mul"

// "layer0.qkv rows [0, 26)", "layer0.attention chunk kv 1 chunk 3", "argmax"
std::string taskLabel(const TaskGraph &graph, const Task &task);

} // namespace mk

#endif
