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
void runHeadProjectionTask(TaskContext &context);

// Elements [begin, end) of row r of attention `op`'s output, merged from its
// chunks' partials in buffer `partials`: what an AttentionMerge task stores,
// and what a Gemv merging an attention (mergesAttention) reads as its input.
std::vector<float> mergeAttentionElements(TaskContext &context, const Operation &op,
                                          uint32_t partials, uint64_t r, uint64_t begin,
                                          uint64_t end);

// Runs the task's function; in checked mode, then checks that what it read
// was not overwritten meanwhile.
void runTask(TaskContext &context);

} // namespace mk::cpu

#endif
