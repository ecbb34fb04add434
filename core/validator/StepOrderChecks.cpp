// The order of tasks within a step and between steps.
//
// Counters are never reset, so a wait of step t is satisfied by any
// triggers, whichever step they come from. That is only sound when every
// trigger of step t+1 happens after every trigger of step t. The graph
// guarantees it by funnelling each step through its one Argmax: every task
// is an ancestor of it, and every task of the next step waits for it
// (through a wait with step offset -1, directly or through other tasks). The
// same funnel keeps a fast next step from overwriting data that a slow task
// of this step still reads. Tensor parallel, the funnel is every rank's
// Argmax (allRanks waits), since a rank's AllReduce reads the other ranks'
// partial sums, which their next step overwrites.
#include "core/validator/Ancestry.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/ValidatorChecks.h"

#include <algorithm>

namespace mk::validation {

namespace {

uint32_t argmaxTask(const TaskGraph &graph) {
  auto it = std::find_if(graph.tasks.begin(), graph.tasks.end(),
                         [](const Task &task) { return task.kind == TaskKind::Argmax; });
  return static_cast<uint32_t>(it - graph.tasks.begin());
}

} // namespace

std::string checkTaskOrder(const TaskGraph &graph) {
  std::vector<int64_t> lastTrigger(graph.events.size(), -1);
  for (uint32_t task = 0; task < graph.tasks.size(); ++task)
    lastTrigger[graph.tasks[task].trigger] = task;
  for (uint32_t task = 0; task < graph.tasks.size(); ++task)
    for (const Wait &wait : graph.tasks[task].waits)
      if (wait.stepOffset == 0 && lastTrigger[wait.event] >= task)
        return cat(describeTask(graph, task), " waits on ", describeEvent(graph, wait.event),
                   ", which ", describeTask(graph, lastTrigger[wait.event]),
                   " triggers; that task is not earlier in the task list, which must be a "
                   "topological order");
  return "";
}

std::string checkStepOrder(const TaskGraph &graph, const Ancestry &ancestry) {
  uint32_t argmax = argmaxTask(graph);
  TaskSet beforeArgmax = ancestry.ancestorsOf(argmax);
  beforeArgmax.insert(argmax);
  if (size_t missing = beforeArgmax.firstMissing(); missing < graph.tasks.size())
    return cat(describeTask(graph, missing), " does not happen before ",
               describeTask(graph, argmax),
               ", so the next step may start while it still runs");

  // Within one step nothing follows the Argmax, so a task of the next step
  // is after it exactly when it waits, with offset -1, on an event the
  // Argmax triggers, or with offset 0 on an event some such task triggers.
  std::vector<bool> eventAfter(graph.events.size());
  for (uint32_t task = 0; task < graph.tasks.size(); ++task) {
    const Task &current = graph.tasks[task];
    bool everyRank = graph.ranks == 1;
    bool after = std::any_of(current.waits.begin(), current.waits.end(), [&](const Wait &wait) {
      return wait.stepOffset == -1
                 ? wait.event == graph.tasks[argmax].trigger && (everyRank || wait.allRanks)
                 : bool(eventAfter[wait.event]);
    });
    if (!after)
      return cat(describeTask(graph, task), " does not wait, through a wait with step offset -1 "
                 "or a chain of waits, for the previous step's ",
                 describeTask(graph, argmax), everyRank ? "" : " on every rank",
                 ", so it may run before the previous step ends");
    eventAfter[current.trigger] = true;
  }
  return "";
}

} // namespace mk::validation
