// Finer events: replaces the one-event-per-operation joins of lowerToTasks()
// by events over exactly the producer tiles a consumer needs, derived from
// what each task reads and writes. An AttentionChunk of KV group g then
// waits only on the q/k/v tiles of group g, a merge only on its group's
// chunks.
//
// How: a consumer needs the producers whose writes overlap its reads. A need
// already implied through another need (the residual rows a tile adds were
// also read, whole, by an earlier op it waits on) is redundant and does not
// shape events. Producers needed by exactly the same consumers share one
// event, since a task triggers exactly one event and a consumer waiting on it
// waits for all its triggers. A consumer also waits on the event of a
// redundant need when that costs nothing (all of that event's tasks are
// already its ancestors), so its waits name every producer of its reads.
#ifndef MKC_COMPILER_TASKGRAPH_CHUNKDEPENDENCIES_H
#define MKC_COMPILER_TASKGRAPH_CHUNKDEPENDENCIES_H

#include "core/taskgraph/TaskGraph.h"
#include "compiler/taskgraph/TaskGraphAnalysis.h"

namespace mk {

struct DependencyReport {
  DependencyStats naive;   // the events the graph came with
  DependencyStats chunked; // the finer events
  bool keptChunked = false;
};

// Rewrites the waits, triggers and events of `graph` when the finer events
// are better, comparing in order: the critical path in weight bytes, in
// tasks, then the producer tasks waited on, then the waits. Tasks, their
// order and their reads and writes are unchanged.
DependencyReport chunkDependencies(TaskGraph &graph);

} // namespace mk

#endif
