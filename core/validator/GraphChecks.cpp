// The checks every later one relies on: indices in range, kinds known,
// operations consistent, declared ranges in bounds, trigger counts exact.
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/ValidatorChecks.h"

namespace mk::validation {

namespace {

bool knownKind(BufferKind kind) { return kind <= BufferKind::Token; }
std::string checkBuffers(const TaskGraph &graph) {
  if (graph.maxContext <= 0)
    return cat("maxContext is ", graph.maxContext, ", expected a positive number of positions");
  // Positions are 32-bit where every engine splits them over attention
  // chunks (core/protocol/AttentionLayout.h).
  if (graph.maxContext > INT32_MAX)
    return cat("maxContext is ", graph.maxContext, ", over the 2^31 - 1 positions of the "
               "attention's 32-bit position arithmetic");
  // Tensor parallel: a rank of at most 64 (more GPUs than one host has).
  if (graph.ranks <= 0 || graph.ranks > 64 || graph.rank < 0 || graph.rank >= graph.ranks)
    return cat("the graph is rank ", graph.rank, " of ", graph.ranks,
               ", expected a rank in [0, ranks) of 1 to 64 ranks");
  if (graph.rows <= 0 || graph.rows > kMaxStepRows)
    return cat("a step has ", graph.rows, " rows, expected 1 to ", kMaxStepRows);
  // Every row has its own sequence or its own position: no more sequences
  // than positions in all, which also keeps sequences x maxContext in 64 bits.
  uint64_t slots = 0;
  if (graph.sequences <= 0 || graph.sequences > kMaxStepRows ||
      !multiply(graph.sequences, graph.maxContext, slots))
    return cat("the KV caches hold ", graph.sequences, " sequences, expected 1 to ", kMaxStepRows);
  for (size_t index = 0; index < graph.buffers.size(); ++index) {
    const Buffer &buffer = graph.buffers[index];
    if (!knownKind(buffer.kind))
      return cat("buffer ", index, " '", buffer.name, "' has an unknown kind (", int(buffer.kind), ")");
    if (buffer.kind == BufferKind::KVCache && (buffer.elements == 0 || buffer.elements % slots != 0))
      return cat("KV cache '", buffer.name, "' has ", buffer.elements,
                 " elements, not a positive multiple of ", graph.sequences,
                 " sequences x maxContext ", graph.maxContext);
    bool elementFits = buffer.element == BufferElement::F32 ||
                       (buffer.kind == BufferKind::KVCache && buffer.element == BufferElement::BF16) ||
                       (buffer.kind == BufferKind::Activation &&
                        buffer.element == BufferElement::Fixed64);
    if (!elementFits)
      return cat("buffer '", buffer.name, "' keeps ", int(buffer.element),
                 "-coded elements: only a KV cache may keep bf16 (1) and an Activation "
                 "fixed64 (2), every buffer f32 (0)");
    if ((buffer.kind == BufferKind::Activation || buffer.kind == BufferKind::Scratch) &&
        buffer.elements % graph.rows != 0)
      return cat("buffer '", buffer.name, "' has ", buffer.elements,
                 " elements, not a multiple of the step's ", graph.rows, " rows");
    if (buffer.kind == BufferKind::Token && index != graph.tokenBuffer)
      return cat("buffer ", index, " '", buffer.name, "' is a second Token buffer (the token buffer is ",
                 graph.tokenBuffer, ")");
  }
  if (graph.tokenBuffer >= graph.buffers.size() ||
      graph.buffers[graph.tokenBuffer].kind != BufferKind::Token ||
      graph.buffers[graph.tokenBuffer].elements != static_cast<uint64_t>(graph.rows))
    return cat("the token buffer ", graph.tokenBuffer,
               " is not a Token buffer of one element per row (", graph.rows, ")");
  if (graph.logitsBuffer >= graph.buffers.size() ||
      graph.buffers[graph.logitsBuffer].kind != BufferKind::Activation ||
      graph.buffers[graph.logitsBuffer].elements == 0)
    return cat("the logits buffer ", graph.logitsBuffer, " is not a non-empty Activation buffer");
  return "";
}

std::string checkRange(const TaskGraph &graph, const BufferRange &range) {
  if (range.buffer >= graph.buffers.size())
    return "is in no buffer";
  const Buffer &buffer = graph.buffers[range.buffer];
  uint64_t bound = rangeExtent(graph, buffer);
  if (range.begin > range.end || range.end > bound)
    return cat("is not within the ", bound, " elements of ",
               buffer.kind == BufferKind::KVCache ? "the step's slots of that cache" : "that buffer");
  return "";
}

std::string checkTask(const TaskGraph &graph, uint32_t index) {
  const Task &task = graph.tasks[index];
  std::string name = describeTask(graph, index);
  if (task.id != index)
    return cat(name, " has id ", task.id, ", expected its index");
  if (!isTaskKind(task.kind))
    return cat(name, " has an unknown kind (", int(task.kind), ")");
  if (task.op >= graph.operations.size())
    return cat(name, " names an operation out of range");
  if (graph.operations[task.op].kind != describeKind(task.kind).operation)
    return cat(name, " is a ", taskKindName(task.kind), " task of a ",
               opKindName(graph.operations[task.op].kind), " operation");
  if (task.trigger >= graph.events.size())
    return cat(name, " triggers ", describeEvent(graph, task.trigger));
  for (const Wait &wait : task.waits) {
    if (wait.event >= graph.events.size())
      return cat(name, " waits on ", describeEvent(graph, wait.event));
    if (wait.stepOffset != 0 && wait.stepOffset != -1)
      return cat(name, " waits on ", describeEvent(graph, wait.event), " with step offset ",
                 wait.stepOffset, ", expected 0 or -1");
  }
  for (const auto *ranges : {&task.reads, &task.writes, &task.accumulates})
    for (const BufferRange &range : *ranges)
      if (std::string problem = checkRange(graph, range); !problem.empty())
        return cat(name, ": its declared ",
                   ranges == &task.reads    ? "read"
                   : ranges == &task.writes ? "write"
                                            : "addition into",
                   " of ", describeRange(graph, range), " ", problem);
  return checkTile(graph, index);
}

std::string checkTriggerCounts(const TaskGraph &graph) {
  std::vector<uint64_t> triggers(graph.events.size());
  for (const Task &task : graph.tasks)
    ++triggers[task.trigger];
  for (uint32_t event = 0; event < graph.events.size(); ++event) {
    if (graph.events[event].triggerCount != triggers[event])
      return cat(describeEvent(graph, event), " has trigger count ",
                 graph.events[event].triggerCount, " but ", triggers[event],
                 " tasks trigger it");
    // The GPU's counters are 32 bits and never reset within a launch, which
    // runs at most maxContext steps (core/protocol/EventProtocol.h).
    uint64_t most = 0;
    if (!multiply(triggers[event], static_cast<uint64_t>(graph.maxContext), most) ||
        most > UINT32_MAX)
      return cat(describeEvent(graph, event), " is triggered ", triggers[event],
                 " times a step: over ", graph.maxContext,
                 " steps its counter would pass the GPU's 32 bits");
  }
  return "";
}

std::string checkKindsPresent(const TaskGraph &graph) {
  size_t embeds = 0, argmaxes = 0;
  for (const Task &task : graph.tasks) {
    embeds += task.kind == TaskKind::Embed;
    argmaxes += task.kind == TaskKind::Argmax;
  }
  if (embeds == 0)
    return "the graph has no Embed task";
  if (argmaxes != 1)
    return cat("the graph has ", argmaxes, " Argmax tasks, expected one: it ends the step");
  return "";
}

} // namespace

std::string checkGraph(const TaskGraph &graph) {
  if (graph.tasks.empty())
    return "the graph has no tasks";
  if (graph.tasks.size() >= UINT32_MAX || graph.events.size() >= UINT32_MAX)
    return "the graph has more tasks or events than 32-bit ids can name";
  if (std::string problem = checkBuffers(graph); !problem.empty())
    return problem;
  for (uint32_t event = 0; event < graph.events.size(); ++event)
    if (graph.events[event].id != event)
      return cat(describeEvent(graph, event), " has id ", graph.events[event].id,
                 ", expected its index");
  for (uint32_t op = 0; op < graph.operations.size(); ++op)
    if (std::string problem = checkOperation(graph, op); !problem.empty())
      return problem;
  for (uint32_t task = 0; task < graph.tasks.size(); ++task)
    if (std::string problem = checkTask(graph, task); !problem.empty())
      return problem;
  if (std::string problem = checkTriggerCounts(graph); !problem.empty())
    return problem;
  return checkKindsPresent(graph);
}

} // namespace mk::validation
