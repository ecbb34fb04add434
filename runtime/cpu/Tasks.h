// One function per task kind (core/protocol/TaskKindList.h, named
// run<Kind>Task), each the CPU reference of that kind: load what
// the task reads, compute with the reference interpreter's kernels, store
// what it writes. The arithmetic of a task never depends on which SM runs it
// or when, so every run of a graph gives the same bits.
#ifndef MKC_RUNTIME_CPU_TASKS_H
#define MKC_RUNTIME_CPU_TASKS_H

#include "runtime/cpu/TaskContext.h"

namespace mk::cpu {

void runEmbedTask(TaskContext &context);
void runGemvTask(TaskContext &context);
void runAttentionChunkTask(TaskContext &context);
void runAttentionMergeTask(TaskContext &context);
void runArgmaxTask(TaskContext &context);
void runAllReduceTask(TaskContext &context);
void runMlpTask(TaskContext &context);

// Runs the task's function; in checked mode, then checks that what it read
// was not overwritten meanwhile.
void runTask(TaskContext &context);

} // namespace mk::cpu

#endif
