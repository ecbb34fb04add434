#include "runtime/format/ScheduleBlobBuilder.h"

#include "core/taskgraph/KernelVariants.h"
#include "runtime/format/WeightPacking.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace mk {

static_assert(sizeof(MkBlobHeader) == 168 && sizeof(MkQueue) == 8 && sizeof(MkTaskRecord) == 32 &&
                  sizeof(MkWaitRecord) == 16 && sizeof(MkEventRecord) == 8 &&
                  sizeof(MkOperationRecord) == 232 && sizeof(MkResolvedWait) == 16 &&
                  sizeof(MkQueueEntry) == 336,
              "the blob's records have no padding, so NVRTC and the host agree on them");
static_assert(sizeof(MkQueueEntry) % 16 == 0, "queue entries are copied in 16-byte units");
// Measured on the H200 (bench/results/2026-12-02-h200-spread-ahead): queue
// entries of 352 bytes instead of 336 made every build 1-4% slower, for a
// reason not found. Measure before growing MkOperationRecord or the entry.

namespace {

constexpr uint64_t kRegionAlignment = 16; // bytes, for vector loads of records

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint32_t narrow(uint64_t value, const std::string &what) {
  if (value > UINT32_MAX)
    throw ScheduleBlobError(what + " (" + std::to_string(value) +
                            ") does not fit the blob's 32-bit field");
  return static_cast<uint32_t>(value);
}

mk_i32 narrowCount(int64_t value, const std::string &what) {
  if (value < 0 || value > INT32_MAX)
    throw ScheduleBlobError(what + " (" + std::to_string(value) +
                            ") does not fit the blob's 31-bit count");
  return static_cast<mk_i32>(value);
}

class ParamsBuilder {
public:
  explicit ParamsBuilder(const std::function<std::vector<float>(const std::string &)> &smallParams)
      : smallParams(smallParams) {}

  std::vector<float> values;

  uint64_t vector(const WeightRef &ref) {
    if (ref.name.empty())
      return MK_NO_OFFSET;
    auto found = byName.find(ref.name);
    if (found != byName.end())
      return found->second;
    uint64_t offset = start();
    append(ref);
    byName.emplace(ref.name, offset);
    return offset;
  }
  uint64_t stacked(const std::vector<WeightRef> &refs) {
    if (refs.empty())
      return MK_NO_OFFSET;
    uint64_t offset = start();
    for (const WeightRef &ref : refs)
      append(ref);
    return offset;
  }
  uint64_t floats(const std::vector<float> &data) {
    if (data.empty())
      return MK_NO_OFFSET;
    uint64_t offset = start();
    values.insert(values.end(), data.begin(), data.end());
    return offset;
  }

private:
  uint64_t start() {
    values.resize(alignUp(values.size(), kParamsAlignment), 0.0f);
    return values.size();
  }
  void append(const WeightRef &ref) {
    std::vector<float> data = smallParams(ref.name);
    if (data.size() != ref.rows * ref.cols)
      throw ScheduleBlobError("parameter '" + ref.name + "' has " + std::to_string(data.size()) +
                              " values, the graph expects " + std::to_string(ref.rows * ref.cols));
    values.insert(values.end(), data.begin(), data.end());
  }

  const std::function<std::vector<float>(const std::string &)> &smallParams;
  std::map<std::string, uint64_t> byName;
};

class OperationRecords {
public:
  OperationRecords(const ArenaLayout &arenas, const std::vector<WeightEntry> &weights,
                   ParamsBuilder &params)
      : arenas(arenas), params(params) {
    for (const WeightEntry &entry : weights)
      index.emplace(entry.name, &entry);
  }

  MkOperationRecord build(const Operation &op) {
    MkOperationRecord record{};
    record.kind = static_cast<mk_u8>(op.kind);
    record.epilogue = static_cast<mk_u8>(op.epilogue);
    record.interleaved = op.interleaved ? 1 : 0;
    record.layer = op.layer;
    record.input = arenas.offset[op.input];
    record.output = arenas.offset[op.output];
    // An AllReduce adds the residual too (core/taskgraph/kinds/AllReduceKind.cpp).
    bool residual = op.epilogue == Epilogue::Residual || op.kind == OpKind::AllReduce;
    record.residual = residual ? arenas.offset[op.residual] : MK_NO_OFFSET;
    record.inputLength = op.inputLength;
    record.outputLength = op.outputLength;
    setWeights(op, record);
    record.norm = params.vector(op.norm);
    record.bias = params.stacked(op.biases);
    record.eps = op.eps;
    record.scale = op.scale;
    record.numHeads = op.numHeads;
    record.numKvHeads = op.numKvHeads;
    record.headDim = op.headDim;
    record.rotaryDim = op.rotaryDim;
    record.chunkSize = narrowCount(op.chunkSize, "chunkSize");
    record.window = narrowCount(op.window, "window");
    bool picks = op.picks != kNoBuffer;
    record.numChunks =
        narrowCount(picks ? op.numPicks : op.numChunks, picks ? "numPicks" : "numChunks");
    record.chunksPerRound = narrowCount(op.chunksPerRound, "chunksPerRound");
    record.qNorm = params.vector(op.qNorm);
    record.kNorm = params.vector(op.kNorm);
    record.invFreq = params.floats(op.invFreq);
    bool attention = op.kind == OpKind::Attention;
    record.keyCache = attention ? arenas.offset[op.keyCache] : MK_NO_OFFSET;
    if (op.seed != kNoBuffer)
      record.seed = arenas.offset[op.seed];
    record.valueCache = attention ? arenas.offset[op.valueCache] : MK_NO_OFFSET;
    record.partials = attention ? arenas.offset[op.partials]
                      : picks   ? arenas.offset[op.picks]
                                : MK_NO_OFFSET;
    return record;
  }

private:
  void setWeights(const Operation &op, MkOperationRecord &record) {
    if (op.weights.size() > MK_MAX_GEMV_WEIGHTS)
      throw ScheduleBlobError("operation '" + op.name + "' stacks " +
                              std::to_string(op.weights.size()) + " weights, the blob holds " +
                              std::to_string(MK_MAX_GEMV_WEIGHTS));
    record.numWeights = static_cast<mk_u8>(op.weights.size());
    for (int i = 0; i < MK_MAX_GEMV_WEIGHTS; ++i)
      record.weights[i] = MK_NO_OFFSET;
    for (size_t i = 0; i < op.weights.size(); ++i) {
      const WeightRef &ref = op.weights[i];
      auto found = index.find(ref.name);
      if (found == index.end())
        throw ScheduleBlobError("operation '" + op.name + "' names weight '" + ref.name +
                                "', which is not in the weight index");
      const WeightEntry &entry = *found->second;
      if (entry.rows != ref.rows || entry.cols != ref.cols)
        throw ScheduleBlobError("weight '" + ref.name + "' is [" + std::to_string(entry.rows) +
                                ", " + std::to_string(entry.cols) + "] in the index, [" +
                                std::to_string(ref.rows) + ", " + std::to_string(ref.cols) +
                                "] in operation '" + op.name + "'");
      record.weights[i] = entry.offset;
      record.weightRows[i] = entry.rows;
    }
  }

  const ArenaLayout &arenas;
  ParamsBuilder &params;
  std::map<std::string, const WeightEntry *> index;
};

// The task at one place of a queue, with its operation and its first waits
// resolved against the events.
MkQueueEntry queueEntry(const Task &task, const MkTaskRecord &record,
                        const MkOperationRecord &operation,
                        const std::vector<MkEventRecord> &events) {
  MkQueueEntry entry{};
  entry.task = record;
  entry.id = task.id;
  for (size_t w = 0; w < task.waits.size() && w < MK_ENTRY_WAITS; ++w) {
    const Wait &wait = task.waits[w];
    if (wait.event >= events.size())
      throw ScheduleBlobError("task " + std::to_string(task.id) + " waits on event " +
                              std::to_string(wait.event) + " of " +
                              std::to_string(events.size()));
    entry.waits[w] = {wait.event, events[wait.event].triggerCount, wait.stepOffset,
                      wait.allRanks ? 1u : 0u};
  }
  entry.operation = operation;
  return entry;
}

// The blob's bytes, region by region.
class BlobWriter {
public:
  std::vector<uint8_t> bytes = std::vector<uint8_t>(sizeof(MkBlobHeader), 0);

  template <class T> uint64_t region(const std::vector<T> &records) {
    bytes.resize(alignUp(bytes.size(), kRegionAlignment), 0);
    uint64_t offset = bytes.size();
    bytes.resize(offset + records.size() * sizeof(T));
    if (!records.empty())
      std::memcpy(bytes.data() + offset, records.data(), records.size() * sizeof(T));
    return offset;
  }
};

// The device's steps: one row of one sequence (decode), or a batch, row r
// sequence r. A prefill chunk's rows attend to the chunk's earlier rows,
// which the device functions do not yet take from the step's input
// (docs/m-token-steps.md). The device finds row r of a buffer from its
// operation's lengths (codegen/device/StepRows.cuh): each buffer an
// operation reads or writes per row must be that long a row.
void checkDeviceRows(const TaskGraph &graph) {
  if (graph.rows == 1 && graph.sequences == 1)
    return;
  if (graph.rows != graph.sequences)
    throw ScheduleBlobError("the task graph's step holds " + std::to_string(graph.rows) +
                            " rows of " + std::to_string(graph.sequences) +
                            " sequence(s): the device runs decode and batches (a row per "
                            "sequence), not yet prefill chunks");
  auto expect = [&](const Operation &op, uint32_t buffer, uint64_t length, const char *what) {
    if (buffer == kNoBuffer || buffer >= graph.buffers.size())
      return;
    uint64_t row = rowLength(graph, graph.buffers[buffer]);
    if (row != length)
      throw ScheduleBlobError("operation '" + op.name + "': a row of its " + what + " '" +
                              graph.buffers[buffer].name + "' is " + std::to_string(row) +
                              " elements, the device expects " + std::to_string(length));
  };
  for (const Operation &op : graph.operations) {
    switch (op.kind) {
    case OpKind::Embed:
      expect(op, op.output, op.outputLength, "output");
      if (op.seed != kNoBuffer)
        throw ScheduleBlobError("operation '" + op.name +
                                "' seeds a fixed64 output: the device runs seeds one row a step");
      break;
    case OpKind::Gemv:
      expect(op, op.input, op.inputLength, "input");
      expect(op, op.output, op.outputLength, "output");
      if (op.epilogue == Epilogue::Residual)
        expect(op, op.residual, op.outputLength, "residual");
      expect(op, op.picks, 2 * uint64_t(op.numPicks), "picks");
      if (op.seed != kNoBuffer || projectsByHead(op))
        throw ScheduleBlobError("operation '" + op.name +
                                "' seeds or projects by head: the device runs those one row a "
                                "step");
      break;
    case OpKind::Attention: {
      uint64_t heads = op.numHeads, kvHeads = op.numKvHeads, dim = op.headDim;
      expect(op, op.input, (heads + 2 * kvHeads) * dim, "input");
      expect(op, op.output, heads * dim, "output");
      expect(op, op.partials, heads * uint64_t(op.numChunks) * (dim + 2), "partials");
      break;
    }
    case OpKind::Argmax:
      expect(op, op.input, op.inputLength, "input");
      expect(op, op.picks, 2 * uint64_t(op.numPicks), "picks");
      break;
    case OpKind::AllReduce:
      expect(op, op.input, op.inputLength, "input");
      expect(op, op.output, op.outputLength, "output");
      expect(op, op.residual, op.outputLength, "residual");
      break;
    default:
      throw ScheduleBlobError("operation '" + op.name + "' is a " +
                              std::string(opKindName(op.kind)) +
                              ": the device runs it one row a step");
    }
  }
}

} // namespace

std::vector<uint8_t> buildScheduleBlob(
    const TaskGraph &graph, const Schedule &schedule, const std::vector<WeightEntry> &weights,
    const std::function<std::vector<float>(const std::string &weightName)> &smallParams) {
  if (schedule.queues.size() != schedule.numSms)
    throw ScheduleBlobError("the schedule has " + std::to_string(schedule.queues.size()) +
                            " queues for " + std::to_string(schedule.numSms) + " SMs");
  // A rank's graph, as the kernel runs it (codegen/KernelSource.cpp).
  if (graph.ranks < 1 || graph.ranks > MK_MAX_RANKS || (graph.ranks > 1 && graph.rows != 1))
    throw ScheduleBlobError("the task graph is rank " + std::to_string(graph.rank) + " of " +
                            std::to_string(graph.ranks) + " of tensor parallelism, " +
                            std::to_string(graph.rows) + " rows a step; the device runs 1 to " +
                            std::to_string(MK_MAX_RANKS) + " ranks, of one row a step");
  checkDeviceRows(graph);
  ArenaLayout arenas = layOutArenas(graph);
  ParamsBuilder params(smallParams);
  OperationRecords operationRecords(arenas, weights, params);

  std::vector<MkQueue> queues;
  std::vector<mk_u32> taskOrder;
  for (const std::vector<uint32_t> &queue : schedule.queues) {
    queues.push_back(
        {narrow(taskOrder.size(), "a queue's start"), narrow(queue.size(), "a queue's length")});
    taskOrder.insert(taskOrder.end(), queue.begin(), queue.end());
  }
  // The inline tasks after every queue: no MkQueue covers them; a queued
  // entry names its trigger's inline task's entry (inlineEntry).
  std::vector<mk_u32> inlineEntryOf(graph.events.size(), MK_NO_INLINE);
  for (const Task &task : graph.tasks)
    if (task.runsInline) {
      if (task.waits.size() != 1 || task.waits[0].event >= graph.events.size())
        throw ScheduleBlobError("task " + std::to_string(task.id) +
                                " runs inline, so it needs exactly one wait");
      inlineEntryOf[task.waits[0].event] = narrow(taskOrder.size(), "an inline task's entry");
      taskOrder.push_back(task.id);
    }
  KernelVariants variants = listKernelVariants(graph);
  std::vector<MkTaskRecord> tasks;
  std::vector<MkWaitRecord> waits;
  // The events some wait reads on every rank: their triggers release to
  // the other GPUs.
  std::vector<bool> awaitedByRanks(graph.events.size(), false);
  for (const Task &task : graph.tasks)
    for (const Wait &wait : task.waits)
      if (wait.allRanks && wait.event < awaitedByRanks.size())
        awaitedByRanks[wait.event] = true;
  for (const Task &task : graph.tasks) {
    MkTaskRecord record{};
    std::string name = "task " + std::to_string(task.id);
    record.kind = static_cast<mk_u8>(task.kind);
    if (graph.operations[task.op].picks != kNoBuffer && task.kind == TaskKind::Gemv) {
      if (task.ordinal > 0xffff)
        throw ScheduleBlobError(name + "'s ordinal (" + std::to_string(task.ordinal) +
                                ") does not fit the blob's 16 bits");
      record.ordinal = static_cast<mk_u16>(task.ordinal);
    }
    record.op = task.op;
    record.begin = narrow(task.begin, name + "'s tile begin");
    record.end = narrow(task.end, name + "'s tile end");
    record.firstWait = narrow(waits.size(), name + "'s first wait");
    record.numWaits = narrow(task.waits.size(), name + "'s waits");
    record.trigger = task.trigger;
    if (task.trigger < awaitedByRanks.size() && awaitedByRanks[task.trigger])
      record.flags |= MK_TASK_RELEASES_TO_RANKS;
    record.variant = variants.ofTask[task.id];
    tasks.push_back(record);
    for (const Wait &wait : task.waits)
      waits.push_back({wait.event, wait.stepOffset, wait.allRanks ? 1u : 0u, 0});
  }
  std::vector<MkEventRecord> events;
  for (const Event &event : graph.events)
    events.push_back({event.triggerCount, 0});
  std::vector<MkOperationRecord> operations;
  for (const Operation &op : graph.operations)
    operations.push_back(operationRecords.build(op));
  std::vector<MkQueueEntry> entries;
  for (uint32_t id : taskOrder) {
    if (id >= tasks.size() || tasks[id].op >= operations.size())
      throw ScheduleBlobError("the schedule names task " + std::to_string(id) + " of " +
                              std::to_string(tasks.size()) + ", or its operation is not the graph's");
    entries.push_back(queueEntry(graph.tasks[id], tasks[id], operations[tasks[id].op], events));
    entries.back().inlineEntry =
        tasks[id].trigger < inlineEntryOf.size() ? inlineEntryOf[tasks[id].trigger] : MK_NO_INLINE;
  }
  if (taskOrder.size() != tasks.size())
    throw ScheduleBlobError("the schedule's queues and the inline tasks hold " +
                            std::to_string(taskOrder.size()) + " tasks of " +
                            std::to_string(tasks.size()));

  BlobWriter writer;
  MkBlobHeader header{};
  header.magic = MK_BLOB_MAGIC;
  header.version = MK_BLOB_VERSION;
  header.numSms = schedule.numSms;
  header.numTasks = narrow(tasks.size(), "the number of tasks");
  header.numWaits = narrow(waits.size(), "the number of waits");
  header.numEvents = narrow(events.size(), "the number of events");
  header.numOperations = narrow(operations.size(), "the number of operations");
  header.rows = narrow(graph.rows, "the step's rows");
  header.sequences = narrow(graph.sequences, "the sequences");
  header.ranks = narrow(static_cast<uint64_t>(graph.ranks), "the ranks");
  header.numParams = params.values.size();
  header.activationElements = arenas.activationElements;
  header.kvElements = arenas.kvElements;
  header.maxContext = graph.maxContext;
  header.tokenSlot = arenas.offset[graph.tokenBuffer];
  header.logitsOffset = arenas.offset[graph.logitsBuffer];
  header.vocab = rowLength(graph, graph.buffers[graph.logitsBuffer]);
  header.queuesOffset = writer.region(queues);
  header.taskOrderOffset = writer.region(taskOrder);
  header.tasksOffset = writer.region(tasks);
  header.waitsOffset = writer.region(waits);
  header.eventsOffset = writer.region(events);
  header.operationsOffset = writer.region(operations);
  header.paramsOffset = writer.region(params.values);
  header.entriesOffset = writer.region(entries);
  header.totalBytes = writer.bytes.size();
  std::memcpy(writer.bytes.data(), &header, sizeof header);
  return std::move(writer.bytes);
}

ArenaLayout layOutArenas(const TaskGraph &graph) {
  ArenaLayout layout;
  for (const Buffer &buffer : graph.buffers) {
    bool kv = buffer.kind == BufferKind::KVCache;
    uint64_t &end = kv ? layout.kvElements : layout.activationElements;
    // A bf16 cache packs two of its elements into each f32 element; a
    // fixed64 value takes two.
    uint64_t elements = buffer.kind == BufferKind::Token                ? 2 * buffer.elements
                        : buffer.element == BufferElement::BF16    ? (buffer.elements + 1) / 2
                        : buffer.element == BufferElement::Fixed64 ? 2 * buffer.elements
                                                                    : buffer.elements;
    layout.offset.push_back(alignUp(end, kArenaAlignment));
    end = layout.offset.back() + elements;
  }
  return layout;
}

MkBlobHeader readBlobHeader(std::span<const uint8_t> blob) {
  MkBlobHeader header{};
  std::memcpy(&header, blob.data(), std::min(blob.size(), sizeof header));
  return header;
}

std::vector<uint8_t> buildScheduleBlob(const TaskGraph &graph, const Schedule &schedule,
                                       const std::vector<WeightEntry> &weights,
                                       std::span<const uint16_t> data) {
  std::map<std::string, const WeightEntry *> byName;
  for (const WeightEntry &entry : weights)
    byName.emplace(entry.name, &entry);
  return buildScheduleBlob(graph, schedule, weights, [&](const std::string &name) {
    auto found = byName.find(name);
    if (found == byName.end())
      throw ScheduleBlobError("parameter '" + name + "' is not in the weight index");
    return unpackWeight(*found->second, data);
  });
}

} // namespace mk
