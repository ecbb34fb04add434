// A launch's per-task trace (Engine.h's LaunchTrace) as a Chrome trace-event
// JSON file, for chrome://tracing or ui.perfetto.dev: one row (tid) per SM,
// one "X" event per task run named as messages name the task
// (core/taskgraph/TaskNames.h), and one "wait" event before it
// when its SM waited on its events. Times are microseconds from the launch's
// start; args carry the step, the context position and the task id.
#ifndef MKC_RUNTIME_MKRT_CHROMETRACE_H
#define MKC_RUNTIME_MKRT_CHROMETRACE_H

#include "core/taskgraph/TaskGraph.h"
#include "runtime/mkrt/Engine.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace mk::rt {

// `trace.times` must hold whole steps of `graph`'s tasks; step s ran at
// position firstPosition + s. `device` goes into the file's otherData.
void writeChromeTrace(std::ostream &out, const TaskGraph &graph, const Schedule &schedule,
                      const LaunchTrace &trace, int64_t firstPosition, const std::string &device);

// The same into the file at `path`; "" or why it could not be written.
std::string writeChromeTraceFile(const std::string &path, const TaskGraph &graph,
                                 const Schedule &schedule, const LaunchTrace &trace,
                                 int64_t firstPosition, const std::string &device);

// `text` as a JSON string, quotes included.
std::string jsonString(const std::string &text);

} // namespace mk::rt

#endif
