#include "core/taskgraph/TaskNames.h"

#include "core/taskgraph/TaskKind.h"

#include <sstream>

namespace mk {

const char *taskKindName(TaskKind kind) {
  return isTaskKind(kind) ? describeKind(kind).name : "unknown task kind";
}

const char *opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Embed:
    return "Embed";
  case OpKind::Gemv:
    return "Gemv";
  case OpKind::Attention:
    return "Attention";
  case OpKind::Argmax:
    return "Argmax";
  case OpKind::AllReduce:
    return "AllReduce";
  case OpKind::Mlp:
    return "Mlp";
  }
  return "unknown op kind";
}

const char *bufferElementName(BufferElement element) {
  switch (element) {
  case BufferElement::F32:
    return "f32";
  case BufferElement::BF16:
    return "bf16";
  case BufferElement::Fixed64:
    return "fixed64";
  }
  return "unknown element";
}

const char *bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Activation:
    return "Activation";
  case BufferKind::Scratch:
    return "Scratch";
  case BufferKind::KVCache:
    return "KVCache";
  case BufferKind::Token:
    return "Token";
  }
  return "unknown buffer kind";
}

const char *epilogueName(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return "none";
  case Epilogue::SiluMul:
    return "silu_mul";
  case Epilogue::Residual:
    return "residual";
  case Epilogue::GeluTanhMul:
    return "gelu_tanh_mul";
  }
  return "unknown epilogue";
}

std::string describeTask(const TaskGraph &graph, uint32_t index) {
  std::ostringstream os;
  os << "task " << index;
  if (index >= graph.tasks.size()) {
    os << " (out of range: " << graph.tasks.size() << " tasks)";
    return os.str();
  }
  const Task &task = graph.tasks[index];
  os << " (" << taskKindName(task.kind);
  if (task.op < graph.operations.size())
    os << " '" << graph.operations[task.op].name << "'";
  else
    os << " of operation " << task.op << " (out of range)";
  if (isTaskKind(task.kind) && task.op < graph.operations.size()) {
    std::string tile = describeKind(task.kind).describeTile(task);
    if (!tile.empty())
      os << ", " << tile;
  }
  os << ")";
  return os.str();
}

std::string describeOperation(const TaskGraph &graph, uint32_t index) {
  std::ostringstream os;
  os << "operation " << index;
  if (index >= graph.operations.size())
    os << " (out of range: " << graph.operations.size() << " operations)";
  else
    os << " (" << opKindName(graph.operations[index].kind) << " '"
       << graph.operations[index].name << "')";
  return os.str();
}

std::string describeEvent(const TaskGraph &graph, uint32_t index) {
  std::ostringstream os;
  os << "event " << index;
  if (index >= graph.events.size())
    os << " (out of range: " << graph.events.size() << " events)";
  else
    os << " '" << graph.events[index].name << "'";
  return os.str();
}

std::string describeRange(const TaskGraph &graph, const BufferRange &range) {
  std::ostringstream os;
  if (range.buffer >= graph.buffers.size()) {
    os << "buffer " << range.buffer << " (out of range: " << graph.buffers.size() << " buffers)";
  } else {
    const Buffer &buffer = graph.buffers[range.buffer];
    if (buffer.kind == BufferKind::KVCache)
      os << (graph.rows == 1 ? "the current slot" : "the step's slots") << " of KV cache '"
         << buffer.name << "'";
    else
      os << "buffer '" << buffer.name << "'";
  }
  os << " [" << range.begin << ", " << range.end << ")";
  return os.str();
}

std::string describeStep(const TaskGraph &graph) {
  if (graph.rows == 1 && graph.sequences == 1)
    return "decode";
  if (graph.sequences == 1)
    return "a prefill chunk of " + std::to_string(graph.rows) + " tokens";
  if (graph.sequences == graph.rows)
    return "a batch of " + std::to_string(graph.rows) + " sequences";
  return std::to_string(graph.rows) + " rows over " + std::to_string(graph.sequences) +
         " sequences";
}

std::string stepName(const TaskGraph &graph) {
  if (graph.rows == 1 && graph.sequences == 1)
    return "decode";
  if (graph.sequences == 1)
    return "prefill";
  if (graph.sequences == graph.rows)
    return "batch:" + std::to_string(graph.rows);
  return "rows:" + std::to_string(graph.rows) + "/" + std::to_string(graph.sequences);
}

} // namespace mk
