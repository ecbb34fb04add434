#include "compiler/inspect/TaskGraphText.h"

#include "compiler/inspect/TaskLabels.h"
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/TaskNames.h"
#include "compiler/schedule/ScheduleBalance.h"
#include "compiler/schedule/ScheduleSimulation.h"
#include "compiler/taskgraph/TaskGraphAnalysis.h"

#include <cstdio>
#include <iomanip>
#include <map>
#include <set>

namespace mk {

namespace {

struct Counts {
  uint64_t operations = 0, tasks = 0, events = 0, waits = 0, weightBytes = 0;
};

// The operation an event belongs to: that of the tasks triggering it.
std::vector<uint32_t> eventOperations(const TaskGraph &graph) {
  std::vector<uint32_t> op(graph.events.size(), 0);
  auto triggers = eventTriggers(graph);
  for (uint32_t event = 0; event < graph.events.size(); ++event)
    if (!triggers[event].empty())
      op[event] = graph.tasks[triggers[event].front()].op;
  return op;
}

std::string layerLabel(int32_t layer) { return layer < 0 ? "-" : std::to_string(layer); }

std::string ratio(double max, double mean) {
  char text[32];
  std::snprintf(text, sizeof text, "x%.2f", mean > 0 ? max / mean : 1.0);
  return text;
}

void printKinds(std::ostream &os, const TaskGraph &graph) {
  std::map<OpKind, Counts> kinds;
  for (const Operation &op : graph.operations)
    ++kinds[op.kind].operations;
  for (const Task &task : graph.tasks) {
    Counts &counts = kinds[graph.operations[task.op].kind];
    ++counts.tasks;
    counts.waits += task.waits.size();
    counts.weightBytes += task.weightBytes;
  }
  for (uint32_t op : eventOperations(graph))
    ++kinds[graph.operations[op].kind].events;

  os << "by operation kind:\n"
     << "  kind       " << std::setw(6) << "ops" << std::setw(8) << "tasks" << std::setw(8)
     << "events" << std::setw(8) << "waits" << std::setw(13) << "weights" << "\n";
  for (const auto &[kind, counts] : kinds)
    os << "  " << std::left << std::setw(11) << opKindName(kind) << std::right << std::setw(6)
       << counts.operations << std::setw(8) << counts.tasks << std::setw(8) << counts.events
       << std::setw(8) << counts.waits << std::setw(13) << formatBytes(counts.weightBytes)
       << "\n";
}

void printLayers(std::ostream &os, const TaskGraph &graph, const Schedule *schedule) {
  std::map<int32_t, Counts> layers;
  for (const Task &task : graph.tasks) {
    Counts &counts = layers[graph.operations[task.op].layer];
    ++counts.tasks;
    counts.waits += task.waits.size();
    counts.weightBytes += task.weightBytes;
  }
  for (uint32_t op : eventOperations(graph))
    ++layers[graph.operations[op].layer].events;
  std::map<int32_t, BytesPerSm> balance;
  if (schedule)
    for (const LayerBalance &layer : layerBalance(graph, *schedule))
      balance[layer.layer] = layer.bytes;

  os << "by layer:\n"
     << "  layer" << std::setw(8) << "tasks" << std::setw(8) << "events" << std::setw(8)
     << "waits" << std::setw(13) << "weights";
  if (schedule)
    os << std::setw(13) << "max/SM" << std::setw(13) << "mean/SM" << std::setw(10) << "max/mean";
  os << "\n";
  for (const auto &[layer, counts] : layers) {
    os << "  " << std::left << std::setw(5) << layerLabel(layer) << std::right << std::setw(8)
       << counts.tasks << std::setw(8) << counts.events << std::setw(8) << counts.waits
       << std::setw(13) << formatBytes(counts.weightBytes);
    if (schedule) {
      const BytesPerSm &bytes = balance[layer];
      os << std::setw(13) << formatBytes(bytes.max) << std::setw(13) << formatBytes(bytes.mean)
         << std::setw(10) << ratio(bytes.max, bytes.mean);
    }
    os << "\n";
  }
}

void printStats(std::ostream &os, const char *name, const DependencyStats &stats) {
  os << "  " << std::left << std::setw(20) << name << std::right << std::setw(8) << stats.events
     << std::setw(8) << stats.waits << std::setw(14) << stats.waitedTasks << "  "
     << stats.criticalPathTasks << " tasks, " << formatBytes(stats.criticalPathBytes) << "\n";
}

void printDependencies(std::ostream &os, const DependencyReport &report) {
  os << std::left << std::setw(22) << "dependencies:" << std::right << std::setw(8) << "events"
     << std::setw(8)
     << "waits" << std::setw(14) << "waited tasks" << "  critical path\n";
  printStats(os, report.keptChunked ? "per operation" : "per operation (kept)", report.naive);
  printStats(os, report.keptChunked ? "chunked (kept)" : "chunked", report.chunked);
}

void printScheduleLine(std::ostream &os, const TaskGraph &graph, const TargetDescription &target,
                       const Schedule &schedule) {
  BytesPerSm bytes = stepBalance(graph, schedule);
  SimulationResult simulated = simulateSchedule(graph, schedule, target);
  os << "schedule: " << schedule.numSms << " SMs, weights per SM max " << formatBytes(bytes.max)
     << ", mean " << formatBytes(bytes.mean) << " (" << ratio(bytes.max, bytes.mean) << ")";
  if (simulated.completed) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f", simulated.secondsPerStep * 1e6);
    os << "; " << simulated.steps << " steps simulated in order per SM: no deadlock, " << time
       << " us per step\n";
  } else {
    os << "; the simulation did not finish:\n" << simulated.problem;
  }
}

void printWaits(std::ostream &os, const Task &task) {
  os << "waits";
  if (task.waits.empty())
    os << " none";
  for (const Wait &wait : task.waits) {
    os << " " << wait.event;
    if (wait.stepOffset != 0)
      os << "(" << wait.stepOffset << ")";
  }
}

} // namespace

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  else
    std::snprintf(text, sizeof text, "%.2f %s", bytes, units[unit]);
  return text;
}

void printSummary(std::ostream &os, const TaskGraph &graph, const TargetDescription &target,
                  const DependencyReport *dependencies, const Schedule *schedule) {
  std::set<int32_t> layers;
  uint64_t waits = 0;
  for (const Operation &op : graph.operations)
    if (op.layer >= 0)
      layers.insert(op.layer);
  for (const Task &task : graph.tasks)
    waits += task.waits.size();
  os << "model: " << layers.size() << " layers, max context " << graph.maxContext << ", "
     << (graph.rows == 1 && graph.sequences == 1 ? "" : describeStep(graph) + " a step, ")
     << graph.operations.size() << " operations, " << graph.buffers.size() << " buffers, "
     << graph.tasks.size() << " tasks, " << graph.events.size() << " events, " << waits
     << " waits\n"
     << "target: " << target.name << ", " << target.numSms << " SMs, " << target.bytesPerWeight
     << " bytes per weight\n\n";
  printKinds(os, graph);
  os << "\n";
  printLayers(os, graph, schedule);
  if (dependencies) {
    os << "\n";
    printDependencies(os, *dependencies);
  }
  if (schedule) {
    os << "\n";
    printScheduleLine(os, graph, target, *schedule);
  }
}

void printTaskListing(std::ostream &os, const TaskGraph &graph) {
  os << "buffers:\n";
  for (uint32_t i = 0; i < graph.buffers.size(); ++i) {
    const Buffer &buffer = graph.buffers[i];
    os << "  " << i << " " << buffer.name << ": " << bufferKindName(buffer.kind) << ", "
       << buffer.elements
       << (buffer.element == BufferElement::F32 ? "" : std::string(" ") +
                                                          bufferElementName(buffer.element))
       << " elements\n";
  }
  os << "operations:\n";
  for (uint32_t i = 0; i < graph.operations.size(); ++i) {
    const Operation &op = graph.operations[i];
    os << "  " << i << " " << op.name << ": " << opKindName(op.kind) << " "
       << graph.buffers[op.input].name << " -> " << graph.buffers[op.output].name;
    if (op.kind == OpKind::Gemv) {
      os << ", " << op.weights.size() << " weights, " << op.inputLength << " -> "
         << op.outputLength << ", epilogue " << epilogueName(op.epilogue);
      if (op.epilogue == Epilogue::Residual)
        os << " (" << graph.buffers[op.residual].name << ")";
      if (!op.norm.name.empty())
        os << ", norm";
      if (!op.biases.empty())
        os << ", biases";
      if (op.seed != kNoBuffer && op.seed < graph.buffers.size())
        os << ", seeds " << graph.buffers[op.seed].name;
      if (mergesAttention(op))
        os << ", merges the attention's " << op.numChunks << " chunks";
      if (projectsByHead(op))
        os << " by head, " << op.sliceWidth << " rows a tile, adds into fixed64";
    }
    if (op.kind == OpKind::Embed && op.seed != kNoBuffer && op.seed < graph.buffers.size())
      os << ", seeds " << graph.buffers[op.seed].name;
    if (op.kind == OpKind::Mlp && op.weights.size() == 3)
      os << ", " << op.inputLength << " -> " << op.weights[0].rows << " -> " << op.outputLength
         << " in slices of " << op.sliceWidth << " channels, adds into fixed64"
         << (op.norm.name.empty() ? "" : ", norm");
    if (op.picks != kNoBuffer && op.picks < graph.buffers.size())
      os << ", " << op.numPicks << " picks (" << graph.buffers[op.picks].name << ")";
    if (op.kind == OpKind::Attention) {
      os << ", " << op.numHeads << " heads, " << op.numKvHeads << " kv heads, head dim "
         << op.headDim << ", " << op.numChunks << " chunks of " << op.chunkSize << " ("
         << op.chunksPerRound << " a round)";
      if (op.window > 0)
        os << ", a sliding window of " << op.window << " positions";
      const int64_t group = op.numKvHeads > 0 ? op.numHeads / op.numKvHeads : 0;
      const BufferElement element = graph.buffers[op.keyCache].element;
      const int64_t cacheBytes = static_cast<int64_t>(bytesPerElement(element));
      os << ", " << (element == BufferElement::BF16 ? "bf16" : "f32") << " KV cache";
      if (attentionChunkStaged(op.headDim, group, op.chunkSize, cacheBytes))
        os << ", staged through " << attentionStages(op.headDim, group, op.chunkSize, cacheBytes)
           << " slots of " << attentionBlockRows(op.headDim, op.chunkSize)
           << " positions";
    }
    os << "\n";
  }
  os << "events:\n";
  for (const Event &event : graph.events)
    os << "  " << event.id << " " << event.name << ": trigger count " << event.triggerCount
       << "\n";
  os << "tasks:\n";
  for (const Task &task : graph.tasks) {
    os << "  " << task.id << " " << taskKindName(task.kind) << " " << taskLabel(graph, task)
       << (task.runsInline ? ", inline" : "") << ": ";
    printWaits(os, task);
    os << "; triggers " << task.trigger << "; " << task.weightBytes << " weight bytes\n";
  }
}

void printQueues(std::ostream &os, const TaskGraph &graph, const Schedule &schedule) {
  for (uint32_t sm = 0; sm < schedule.queues.size(); ++sm) {
    const auto &queue = schedule.queues[sm];
    uint64_t bytes = 0;
    for (uint32_t task : queue)
      bytes += graph.tasks[task].weightBytes;
    os << "SM " << sm << ": " << queue.size() << " tasks, " << formatBytes(bytes) << "\n";
    for (uint32_t id : queue) {
      const Task &task = graph.tasks[id];
      os << "  " << id << " " << taskKindName(task.kind) << " " << taskLabel(graph, task) << ": ";
      printWaits(os, task);
      os << "; triggers " << task.trigger << "\n";
    }
  }
}

} // namespace mk
