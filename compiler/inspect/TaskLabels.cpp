#include "compiler/inspect/TaskLabels.h"

namespace mk {

const char *opKindLabel(OpKind kind) {
  switch (kind) {
  case OpKind::Embed:
    return "embed";
  case OpKind::Gemv:
    return "gemv";
  case OpKind::Attention:
    return "attention";
  case OpKind::Argmax:
    return "argmax";
  }
  return "unknown";
}

const char *taskKindLabel(TaskKind kind) {
  switch (kind) {
  case TaskKind::Embed:
    return "embed";
  case TaskKind::Gemv:
    return "gemv";
  case TaskKind::AttentionPrepare:
    return "attention-prepare";
  case TaskKind::AttentionChunk:
    return "attention-chunk";
  case TaskKind::AttentionMerge:
    return "attention-merge";
  case TaskKind::Argmax:
    return "argmax";
  }
  return "unknown";
}

const char *bufferKindLabel(BufferKind kind) {
  switch (kind) {
  case BufferKind::Activation:
    return "activation";
  case BufferKind::Scratch:
    return "scratch";
  case BufferKind::KVCache:
    return "kv-cache";
  case BufferKind::Token:
    return "token";
  }
  return "unknown";
}

const char *epilogueLabel(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return "none";
  case Epilogue::SiluMul:
    return "silu_mul";
  case Epilogue::Residual:
    return "residual";
  }
  return "unknown";
}

std::string taskLabel(const TaskGraph &graph, const Task &task) {
  const std::string &op = graph.operations[task.op].name;
  auto rows = [&] {
    return " rows [" + std::to_string(task.begin) + ", " + std::to_string(task.end) + ")";
  };
  switch (task.kind) {
  case TaskKind::Embed:
  case TaskKind::Gemv:
    return op + rows();
  case TaskKind::AttentionPrepare:
    return op + " prepare kv " + std::to_string(task.begin);
  case TaskKind::AttentionChunk:
    return op + " chunk kv " + std::to_string(task.begin) + " chunk " + std::to_string(task.end);
  case TaskKind::AttentionMerge:
    return op + " merge kv " + std::to_string(task.begin);
  case TaskKind::Argmax:
    return op;
  }
  return op;
}

} // namespace mk
