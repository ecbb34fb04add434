#include "compiler/schedule/TaskCost.h"

#include "core/taskgraph/TaskKind.h"

namespace mk {

namespace {

// A cross-SM handoff (release, another SM's acquire) is on the order of a
// microsecond; this keeps weightless tasks from looking free.
constexpr double kTaskOverheadSeconds = 0.5e-6;
constexpr uint64_t kActivationBytes = sizeof(float);

} // namespace

uint64_t taskStreamedBytes(const TaskGraph &graph, const Task &task) {
  uint64_t bytes = task.weightBytes;
  for (const BufferRange &read : task.reads)
    if (graph.buffers[read.buffer].kind != BufferKind::KVCache)
      bytes += (read.end - read.begin) * kActivationBytes;
  const Operation &op = graph.operations[task.op];
  uint64_t cacheBytes = op.kind == OpKind::Attention
                            ? bytesPerElement(graph.buffers[op.keyCache].element)
                            : kActivationBytes;
  bytes += describeKind(task.kind).cacheElements(op, task) * cacheBytes;
  return bytes;
}

double taskSeconds(const TaskGraph &graph, const Task &task, const TargetDescription &target) {
  double perSm = static_cast<double>(target.memoryBandwidth) / target.numSms;
  return taskStreamedBytes(graph, task) / perSm + kTaskOverheadSeconds;
}

} // namespace mk
