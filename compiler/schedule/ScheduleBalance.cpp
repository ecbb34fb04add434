#include "compiler/schedule/ScheduleBalance.h"

#include <algorithm>
#include <functional>
#include <set>

namespace mk {

namespace {

BytesPerSm balanceOf(const TaskGraph &graph, const Schedule &schedule,
                     const std::function<bool(const Task &)> &counted) {
  BytesPerSm result;
  for (const auto &queue : schedule.queues) {
    uint64_t bytes = 0;
    for (uint32_t task : queue)
      if (counted(graph.tasks[task]))
        bytes += graph.tasks[task].weightBytes;
    result.total += bytes;
    result.max = std::max(result.max, bytes);
  }
  if (!schedule.queues.empty())
    result.mean = static_cast<double>(result.total) / schedule.queues.size();
  return result;
}

} // namespace

std::vector<LayerBalance> layerBalance(const TaskGraph &graph, const Schedule &schedule) {
  std::set<int32_t> layers;
  for (const Task &task : graph.tasks)
    layers.insert(graph.operations[task.op].layer);
  std::vector<LayerBalance> result;
  for (int32_t layer : layers)
    result.push_back({layer, balanceOf(graph, schedule, [&](const Task &task) {
                        return graph.operations[task.op].layer == layer;
                      })});
  return result;
}

BytesPerSm stepBalance(const TaskGraph &graph, const Schedule &schedule) {
  return balanceOf(graph, schedule, [](const Task &) { return true; });
}

} // namespace mk
