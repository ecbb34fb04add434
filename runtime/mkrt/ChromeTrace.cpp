#include "runtime/mkrt/ChromeTrace.h"

#include "core/taskgraph/TaskNames.h"
#include "runtime/format/ControlBlock.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace mk::rt {

namespace {

// Nanoseconds as microseconds, all digits kept: 12345 -> "12.345".
std::string microseconds(uint64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%03llu",
                static_cast<unsigned long long>(nanoseconds / 1000),
                static_cast<unsigned long long>(nanoseconds % 1000));
  return text;
}

// The earliest time of the trace, so that no event starts before 0: on the
// GPU another CTA may begin its first wait before CTA 0 records the start.
uint64_t originOf(const LaunchTrace &trace) {
  uint64_t origin = trace.startNs;
  for (uint64_t time : trace.times)
    if (time != 0)
      origin = std::min(origin, time);
  return origin;
}

} // namespace

std::string jsonString(const std::string &text) {
  std::string quoted = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      quoted += "\\\"";
      break;
    case '\\':
      quoted += "\\\\";
      break;
    case '\n':
      quoted += "\\n";
      break;
    case '\t':
      quoted += "\\t";
      break;
    default:
      if (c < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        quoted += escaped;
      } else {
        quoted += static_cast<char>(c);
      }
    }
  }
  return quoted + "\"";
}

void writeChromeTrace(std::ostream &out, const TaskGraph &graph, const Schedule &schedule,
                      const LaunchTrace &trace, int64_t firstPosition, const std::string &device) {
  const uint64_t tasks = graph.tasks.size();
  const uint64_t steps = tasks ? trace.times.size() / (tasks * MK_TRACE_TIMES) : 0;
  // Inline tasks run on whichever SM completes their wait, which the trace
  // does not record: they get a row of their own, after the SMs'.
  const uint32_t inlineRow = static_cast<uint32_t>(schedule.queues.size());
  std::vector<uint32_t> smOf(tasks, 0);
  bool anyInline = false;
  for (uint32_t id = 0; id < tasks; ++id)
    if (graph.tasks[id].runsInline) {
      smOf[id] = inlineRow;
      anyInline = true;
    }
  for (uint32_t sm = 0; sm < schedule.queues.size(); ++sm)
    for (uint32_t id : schedule.queues[sm])
      if (id < tasks)
        smOf[id] = sm;
  std::vector<std::string> names(tasks);
  for (uint32_t id = 0; id < tasks; ++id)
    names[id] = jsonString(describeTask(graph, id));
  const uint64_t origin = originOf(trace);

  out << "{\"traceEvents\":[\n";
  bool first = true;
  auto event = [&]() -> std::ostream & {
    out << (first ? "{" : ",\n{");
    first = false;
    return out;
  };
  for (uint32_t sm = 0; sm < schedule.queues.size(); ++sm)
    event() << "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << sm
            << ",\"args\":{\"name\":\"SM " << sm << "\"}}";
  if (anyInline)
    event() << "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" << inlineRow
            << ",\"args\":{\"name\":\"inline tasks (on the SM that completed their wait)\"}}";
  for (uint64_t step = 0; step < steps; ++step)
    for (uint32_t id = 0; id < tasks; ++id) {
      const uint64_t *times = &trace.times[(step * tasks + id) * MK_TRACE_TIMES];
      uint64_t waited = times[MK_TRACE_WAIT], started = times[MK_TRACE_START],
               ended = times[MK_TRACE_END];
      if (started == 0 || ended == 0)
        continue; // the launch ended before this task
      std::string common = ",\"pid\":0,\"tid\":" + std::to_string(smOf[id]) +
                           ",\"args\":{\"step\":" + std::to_string(step) + ",\"position\":" +
                           std::to_string(firstPosition + static_cast<int64_t>(step)) +
                           ",\"task\":" + std::to_string(id) + "}}";
      if (waited != 0 && started > waited)
        event() << "\"name\":\"wait\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":"
                << microseconds(waited - origin) << ",\"dur\":" << microseconds(started - waited)
                << common;
      event() << "\"name\":" << names[id] << ",\"cat\":\"task\",\"ph\":\"X\",\"ts\":"
              << microseconds(started - origin)
              << ",\"dur\":" << microseconds(ended > started ? ended - started : 0) << common;
    }
  out << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"device\":" << jsonString(device)
      << ",\"steps\":" << steps << ",\"tasks\":" << tasks << ",\"sms\":" << schedule.queues.size()
      << "}}\n";
}

std::string writeChromeTraceFile(const std::string &path, const TaskGraph &graph,
                                 const Schedule &schedule, const LaunchTrace &trace,
                                 int64_t firstPosition, const std::string &device) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return "cannot open '" + path + "' for writing: " + std::strerror(errno);
  writeChromeTrace(out, graph, schedule, trace, firstPosition, device);
  out.close();
  if (!out)
    return "cannot write the trace to '" + path + "'";
  return "";
}

} // namespace mk::rt
