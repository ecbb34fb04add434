#include "compiler/schedule/Scheduler.h"

#include "compiler/schedule/TaskCost.h"
#include "compiler/taskgraph/TaskGraphAnalysis.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace mk {

namespace {

// SMs that can start a task within this fraction of its own duration of the
// earliest one count as equally early; among them the weight bytes of the
// layer decide.
constexpr double kStartTolerance = 0.1;

} // namespace

Schedule scheduleTasks(const TaskGraph &graph, const TargetDescription &target) {
  uint32_t count = graph.tasks.size(), sms = std::max<uint32_t>(target.numSms, 1);
  Schedule schedule;
  schedule.numSms = sms;
  schedule.queues.assign(sms, {});

  auto predecessors = sameStepPredecessors(graph);
  std::vector<std::vector<uint32_t>> successors(count);
  std::vector<uint32_t> waiting(count);
  for (uint32_t task = 0; task < count; ++task) {
    waiting[task] = predecessors[task].size();
    for (uint32_t producer : predecessors[task])
      successors[producer].push_back(task);
  }

  std::vector<double> cost(count), remaining(count);
  for (const Task &task : graph.tasks)
    cost[task.id] = taskSeconds(graph, task, target);
  for (uint32_t task = count; task-- > 0;) {
    double longest = 0;
    for (uint32_t next : successors[task])
      longest = std::max(longest, remaining[next]);
    remaining[task] = cost[task] + longest;
  }

  // (ready time, -remaining path, id): earliest first, then the most urgent.
  std::set<std::tuple<double, double, uint32_t>> ready;
  std::vector<double> readyTime(count, 0.0), smFree(sms, 0.0);
  for (uint32_t task = 0; task < count; ++task)
    if (waiting[task] == 0)
      ready.insert({0.0, -remaining[task], task});

  std::map<int32_t, std::vector<uint64_t>> layerBytes;
  while (!ready.empty()) {
    uint32_t task = std::get<2>(*ready.begin());
    ready.erase(ready.begin());
    auto &bytes = layerBytes[graph.operations[graph.tasks[task].op].layer];
    bytes.resize(sms, 0);

    auto startOn = [&](uint32_t sm) { return std::max(readyTime[task], smFree[sm]); };
    double earliest = startOn(0);
    for (uint32_t sm = 1; sm < sms; ++sm)
      earliest = std::min(earliest, startOn(sm));
    uint32_t chosen = sms;
    for (uint32_t sm = 0; sm < sms; ++sm) {
      if (startOn(sm) > earliest + kStartTolerance * cost[task])
        continue;
      if (chosen == sms ||
          std::pair(bytes[sm], startOn(sm)) < std::pair(bytes[chosen], startOn(chosen)))
        chosen = sm;
    }

    double finish = startOn(chosen) + cost[task];
    schedule.queues[chosen].push_back(task);
    smFree[chosen] = finish;
    bytes[chosen] += graph.tasks[task].weightBytes;
    for (uint32_t next : successors[task]) {
      readyTime[next] = std::max(readyTime[next], finish);
      if (--waiting[next] == 0)
        ready.insert({readyTime[next], -remaining[next], next});
    }
  }
  return schedule;
}

} // namespace mk
