// Names for the parts of a task graph in messages. Every report about a task
// names it by id, kind, operation and tile, so that a reader can find it in a
// dump of the graph. Safe on corrupted graphs: an index out of range is
// printed as such, never followed.
#ifndef MKC_CORE_TASKGRAPH_TASKNAMES_H
#define MKC_CORE_TASKGRAPH_TASKNAMES_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>

namespace mk {

const char *taskKindName(TaskKind kind);
const char *opKindName(OpKind kind);
const char *bufferElementName(BufferElement element); // f32, bf16, fixed64
const char *bufferKindName(BufferKind kind);
const char *epilogueName(Epilogue epilogue);

// "task 12 (Gemv 'layer0.qkv', rows [0, 32))"
std::string describeTask(const TaskGraph &graph, uint32_t task);
// "operation 3 (Gemv 'layer0.qkv')"
std::string describeOperation(const TaskGraph &graph, uint32_t op);
// "event 4 'layer0.qkv.done'"
std::string describeEvent(const TaskGraph &graph, uint32_t event);
// "buffer 'qkv0' [0, 16)"; for a KV cache, "the current slot of KV cache 'k0' [0, 8)"
std::string describeRange(const TaskGraph &graph, const BufferRange &range);
// What the graph's step is: "decode", "a prefill chunk of 4 tokens", "a
// batch of 3 sequences", or "4 rows over 2 sequences".
std::string describeStep(const TaskGraph &graph);
// The name `mkc --step=` takes for it: "decode", "batch:3", "prefill", or
// "rows:4/2" (rows over sequences) for a step no option makes.
std::string stepName(const TaskGraph &graph);

} // namespace mk

#endif
