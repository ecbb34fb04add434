// Runs a schedule the way the megakernel will, on the cost model: each SM
// takes its queue in order, step after step, and a task starts once its
// events' counters reach their thresholds (TaskGraph.h's protocol). It
// proves the schedule finishes (no SM waits forever) and estimates the time
// of a step.
#ifndef MKC_COMPILER_SCHEDULE_SCHEDULESIMULATION_H
#define MKC_COMPILER_SCHEDULE_SCHEDULESIMULATION_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>

namespace mk {

struct SimulationResult {
  bool completed = false;
  uint32_t steps = 0;
  double seconds = 0.0;        // when the last task of the last step ends
  double secondsPerStep = 0.0; // the last step's duration, from its first start
  // When not completed: why (a task missing from the queues, or each stuck
  // SM's task and the event it waits on).
  std::string problem;
};

struct SimulationOptions {
  uint32_t steps = 2;
  // Each task's time is scaled by a factor in [1 - jitter, 1 + jitter], drawn
  // from a hash of the task and the step: real SMs do not finish identical
  // tiles together, and that is when waiting on fewer producers pays off.
  double jitter = 0.0;
};

SimulationResult simulateSchedule(const TaskGraph &graph, const Schedule &schedule,
                                  const TargetDescription &target,
                                  const SimulationOptions &options = {});

} // namespace mk

#endif
