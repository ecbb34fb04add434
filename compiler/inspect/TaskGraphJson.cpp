#include "compiler/inspect/TaskGraphJson.h"
#include "compiler/inspect/TextFormat.h"

#include "compiler/inspect/TaskLabels.h"
#include "core/taskgraph/TaskNames.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace mk {

namespace {

// JSON has no NaN or infinity; such a value cannot come out of a verified
// module, so null marks it rather than a parse error downstream.
std::string number(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string weight(const WeightRef &ref) {
  return "{\"name\": " + jsonString(ref.name) + ", \"rows\": " + std::to_string(ref.rows) +
         ", \"cols\": " + std::to_string(ref.cols) + "}";
}

template <typename T, typename Print>
void list(std::ostream &os, const std::vector<T> &items, Print print) {
  os << "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      os << ", ";
    print(items[i]);
  }
  os << "]";
}

void ranges(std::ostream &os, const std::vector<BufferRange> &items) {
  list(os, items, [&](const BufferRange &range) {
    os << "{\"buffer\": " << range.buffer << ", \"begin\": " << range.begin
       << ", \"end\": " << range.end << "}";
  });
}

void operation(std::ostream &os, const Operation &op) {
  os << "{\"name\": " << jsonString(op.name) << ", \"kind\": " << jsonString(opKindName(op.kind))
     << ", \"layer\": " << op.layer << ", \"input\": " << op.input
     << ", \"output\": " << op.output << ", \"inputLength\": " << op.inputLength
     << ", \"outputLength\": " << op.outputLength << ", \"weights\": ";
  list(os, op.weights, [&](const WeightRef &ref) { os << weight(ref); });
  if (op.kind == OpKind::Gemv) {
    os << ", \"biases\": ";
    list(os, op.biases, [&](const WeightRef &ref) { os << weight(ref); });
    os << ", \"epilogue\": " << jsonString(epilogueName(op.epilogue));
    if (op.epilogue == Epilogue::Residual)
      os << ", \"residual\": " << op.residual;
    if (!op.norm.name.empty())
      os << ", \"norm\": " << weight(op.norm) << ", \"eps\": " << number(op.eps);
    if (op.seed != kNoBuffer)
      os << ", \"seed\": " << op.seed;
    if (projectsByHead(op))
      os << ", \"byHead\": true, \"sliceWidth\": " << op.sliceWidth;
  }
  if (op.kind == OpKind::Embed && op.seed != kNoBuffer)
    os << ", \"seed\": " << op.seed;
  if (op.kind == OpKind::Mlp) {
    os << ", \"sliceWidth\": " << op.sliceWidth;
    if (!op.norm.name.empty())
      os << ", \"norm\": " << weight(op.norm) << ", \"eps\": " << number(op.eps);
  }
  if (op.kind == OpKind::Attention) {
    os << ", \"numHeads\": " << op.numHeads << ", \"numKvHeads\": " << op.numKvHeads
       << ", \"headDim\": " << op.headDim << ", \"scale\": " << number(op.scale)
       << ", \"rotaryDim\": " << op.rotaryDim << ", \"interleaved\": "
       << (op.interleaved ? "true" : "false") << ", \"invFreq\": ";
    list(os, op.invFreq, [&](float value) { os << number(value); });
    if (!op.qNorm.name.empty())
      os << ", \"qNorm\": " << weight(op.qNorm);
    if (!op.kNorm.name.empty())
      os << ", \"kNorm\": " << weight(op.kNorm);
    if (!op.qNorm.name.empty() || !op.kNorm.name.empty())
      os << ", \"eps\": " << number(op.eps);
    os << ", \"keyCache\": " << op.keyCache << ", \"valueCache\": " << op.valueCache
       << ", \"partials\": " << op.partials
       << ", \"chunkSize\": " << op.chunkSize << ", \"numChunks\": " << op.numChunks
       << ", \"chunksPerRound\": " << op.chunksPerRound << ", \"window\": " << op.window;
  }
  if (op.picks != kNoBuffer)
    os << ", \"picks\": " << op.picks << ", \"numPicks\": " << op.numPicks;
  os << "}";
}

void task(std::ostream &os, const Task &task) {
  os << "{\"id\": " << task.id << ", \"kind\": " << jsonString(taskKindName(task.kind))
     << ", \"op\": " << task.op << ", \"begin\": " << task.begin << ", \"end\": " << task.end
     << ", \"ordinal\": " << task.ordinal << ", \"runsInline\": "
     << (task.runsInline ? "true" : "false") << ", \"waits\": ";
  list(os, task.waits, [&](const Wait &wait) {
    os << "{\"event\": " << wait.event << ", \"stepOffset\": " << wait.stepOffset << "}";
  });
  os << ", \"trigger\": " << task.trigger << ", \"reads\": ";
  ranges(os, task.reads);
  os << ", \"writes\": ";
  ranges(os, task.writes);
  if (!task.accumulates.empty()) {
    os << ", \"accumulates\": ";
    ranges(os, task.accumulates);
  }
  os << ", \"weightBytes\": " << task.weightBytes << "}";
}

} // namespace

void printJson(std::ostream &os, const TaskGraph &graph, const Schedule *schedule) {
  os << "{\n  \"maxContext\": " << graph.maxContext << ",\n  \"rows\": " << graph.rows
     << ",\n  \"sequences\": " << graph.sequences << ",\n  \"tokenBuffer\": "
     << graph.tokenBuffer << ",\n  \"logitsBuffer\": " << graph.logitsBuffer
     << ",\n  \"buffers\": [";
  for (size_t i = 0; i < graph.buffers.size(); ++i) {
    const Buffer &buffer = graph.buffers[i];
    os << (i ? ",\n    " : "\n    ") << "{\"name\": " << jsonString(buffer.name)
       << ", \"kind\": " << jsonString(bufferKindName(buffer.kind))
       << ", \"elements\": " << buffer.elements << ", \"element\": "
       << jsonString(bufferElementName(buffer.element)) << "}";
  }
  os << "\n  ],\n  \"operations\": [";
  for (size_t i = 0; i < graph.operations.size(); ++i) {
    os << (i ? ",\n    " : "\n    ");
    operation(os, graph.operations[i]);
  }
  os << "\n  ],\n  \"events\": [";
  for (size_t i = 0; i < graph.events.size(); ++i) {
    const Event &event = graph.events[i];
    os << (i ? ",\n    " : "\n    ") << "{\"id\": " << event.id
       << ", \"name\": " << jsonString(event.name) << ", \"triggerCount\": " << event.triggerCount
       << "}";
  }
  os << "\n  ],\n  \"tasks\": [";
  for (size_t i = 0; i < graph.tasks.size(); ++i) {
    os << (i ? ",\n    " : "\n    ");
    task(os, graph.tasks[i]);
  }
  os << "\n  ]";
  if (schedule) {
    os << ",\n  \"schedule\": {\"numSms\": " << schedule->numSms << ", \"queues\": [";
    for (size_t sm = 0; sm < schedule->queues.size(); ++sm) {
      os << (sm ? ",\n    " : "\n    ");
      list(os, schedule->queues[sm], [&](uint32_t id) { os << id; });
    }
    os << "\n  ]}";
  }
  os << "\n}\n";
}

} // namespace mk
