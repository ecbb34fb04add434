// How evenly a schedule spreads weight bytes over the SMs. Within a layer
// the SMs meet at the layer's ops' events, so a layer's step time follows
// its busiest SM: the ratio of max to mean bytes per SM is the loss.
#ifndef MKC_COMPILER_SCHEDULE_SCHEDULEBALANCE_H
#define MKC_COMPILER_SCHEDULE_SCHEDULEBALANCE_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <vector>

namespace mk {

struct BytesPerSm {
  uint64_t total = 0;
  uint64_t max = 0;
  double mean = 0.0; // over all SMs of the schedule
};

struct LayerBalance {
  int32_t layer = -1; // -1: the operations outside the layers
  BytesPerSm bytes;
};

// One entry per layer, ascending (-1 first when it has tasks).
std::vector<LayerBalance> layerBalance(const TaskGraph &graph, const Schedule &schedule);

// The whole step.
BytesPerSm stepBalance(const TaskGraph &graph, const Schedule &schedule);

} // namespace mk

#endif
