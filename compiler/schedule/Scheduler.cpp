#include "compiler/schedule/Scheduler.h"

#include "compiler/schedule/TaskCost.h"
#include "compiler/taskgraph/TaskGraphAnalysis.h"
#include "core/taskgraph/TaskKind.h"

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

// The ready task to place next: the first of `ready`, or, when that is a
// tile whose work follows the step's position, the ready tile of its
// operation and kind of the lowest rank (the first of them on a tie). At the
// compiled context every chunk of an attention operation costs the same, but
// at a short position only the first chunks have work: placed by chunk index,
// they take one SM each in the first round of chunk tasks, rather than
// queueing two to an SM behind each other while other SMs hold only empty
// chunks (chunks placed head by head did: measured ~4 us a layer on the
// Llama-3.2-1B shape built for 32800 positions, bench/NOTES.md).
using ReadySet = std::set<std::tuple<double, double, uint32_t>>;

ReadySet::iterator nextToPlace(const TaskGraph &graph, ReadySet &ready) {
  ReadySet::iterator chosen = ready.begin();
  const Task &first = graph.tasks[std::get<2>(*chosen)];
  auto rank = describeKind(first.kind).positionRank;
  if (rank == nullptr)
    return chosen;
  uint64_t lowest = rank(first);
  for (auto it = std::next(ready.begin()); it != ready.end(); ++it) {
    const Task &task = graph.tasks[std::get<2>(*it)];
    if (task.op == first.op && task.kind == first.kind && rank(task) < lowest) {
      lowest = rank(task);
      chosen = it;
    }
  }
  return chosen;
}

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
  ReadySet ready;
  std::vector<double> readyTime(count, 0.0), smFree(sms, 0.0);
  std::vector<uint32_t> lastSm(count, 0); // the SM of the predecessor that finishes last
  for (uint32_t task = 0; task < count; ++task)
    if (waiting[task] == 0)
      ready.insert({0.0, -remaining[task], task});

  std::map<int32_t, std::vector<uint64_t>> layerBytes;
  while (!ready.empty()) {
    auto next = nextToPlace(graph, ready);
    uint32_t task = std::get<2>(*next);
    ready.erase(next);
    auto release = [&](double finish, uint32_t sm) {
      for (uint32_t next : successors[task]) {
        if (finish >= readyTime[next]) {
          readyTime[next] = finish;
          lastSm[next] = sm;
        }
        if (--waiting[next] == 0)
          ready.insert({readyTime[next], -remaining[next], next});
      }
    };
    if (graph.tasks[task].runsInline) {
      // In no queue: it runs on the SM whose trigger completes its wait,
      // as soon as that trigger lands.
      double finish = readyTime[task] + cost[task];
      smFree[lastSm[task]] = std::max(smFree[lastSm[task]], finish);
      release(finish, lastSm[task]);
      continue;
    }
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
    release(finish, chosen);
  }
  return schedule;
}

} // namespace mk
