// The schedule blob of the toy graph: the header counts what the graph
// holds, every record says what its task or operation says, buffers get
// disjoint aligned places in their arenas, the params hold the bf16-rounded
// norms and biases, and what the blob cannot hold is refused by name.
#include "ToyArtifact.h"

#include "runtime/format/Bf16.h"
#include "runtime/format/ScheduleBlobBuilder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

namespace mk {
namespace {

template <class T>
std::vector<T> records(const std::vector<uint8_t> &blob, uint64_t offset, size_t count) {
  std::vector<T> out(count);
  std::memcpy(out.data(), blob.data() + offset, count * sizeof(T));
  return out;
}

struct ToyBlob {
  toy::ToyModel model = toy::buildToyModel(4);
  std::unique_ptr<BuiltArtifact> built = toy::buildToyArtifact(model);
  const std::vector<uint8_t> &blob = built->artifact.scheduleBlob;
  MkBlobHeader header = readBlobHeader(blob);

  std::vector<MkOperationRecord> operations() const {
    return records<MkOperationRecord>(blob, header.operationsOffset, header.numOperations);
  }
  std::vector<float> params() const {
    return records<float>(blob, header.paramsOffset, header.numParams);
  }
  std::vector<float> rounded(const std::string &name) const {
    std::vector<float> values = model.weights.find(name)->values;
    for (float &value : values)
      value = roundToBf16(value);
    return values;
  }
};

TEST(ScheduleBlob, HeaderCountsTheGraphAndRegionsFollowInOrder) {
  ToyBlob toy;
  const MkBlobHeader &h = toy.header;
  EXPECT_EQ(h.magic, MK_BLOB_MAGIC);
  EXPECT_EQ(h.version, MK_BLOB_VERSION);
  EXPECT_EQ(h.numSms, 4u);
  EXPECT_EQ(h.numTasks, toy.model.graph.tasks.size());
  EXPECT_EQ(h.numEvents, toy.model.graph.events.size());
  EXPECT_EQ(h.numOperations, toy.model.graph.operations.size());
  EXPECT_EQ(h.maxContext, toy::kMaxContext);
  EXPECT_EQ(h.vocab, uint64_t(toy::kVocab));
  EXPECT_EQ(h.totalBytes, toy.blob.size());
  uint64_t waits = 0;
  for (const Task &task : toy.model.graph.tasks)
    waits += task.waits.size();
  EXPECT_EQ(h.numWaits, waits);

  std::vector<std::pair<uint64_t, uint64_t>> regions = {
      {h.queuesOffset, h.numSms * sizeof(MkQueue)},
      {h.taskOrderOffset, h.numTasks * 4},
      {h.tasksOffset, h.numTasks * sizeof(MkTaskRecord)},
      {h.waitsOffset, h.numWaits * sizeof(MkWaitRecord)},
      {h.eventsOffset, h.numEvents * sizeof(MkEventRecord)},
      {h.operationsOffset, h.numOperations * sizeof(MkOperationRecord)},
      {h.paramsOffset, h.numParams * 4},
      {h.entriesOffset, h.numTasks * sizeof(MkQueueEntry)}};
  uint64_t end = sizeof(MkBlobHeader);
  for (auto [offset, bytes] : regions) {
    EXPECT_EQ(offset % 16, 0u);
    EXPECT_GE(offset, end);
    end = offset + bytes;
  }
  EXPECT_EQ(end, h.totalBytes);
}

TEST(ScheduleBlob, TaskQueueAndWaitRecordsAreTheSchedules) {
  ToyBlob toy;
  const MkBlobHeader &h = toy.header;
  auto queues = records<MkQueue>(toy.blob, h.queuesOffset, h.numSms);
  auto order = records<uint32_t>(toy.blob, h.taskOrderOffset, h.numTasks);
  for (uint32_t sm = 0; sm < h.numSms; ++sm) {
    const std::vector<uint32_t> &queue = toy.model.schedule.queues[sm];
    ASSERT_EQ(queues[sm].count, queue.size());
    EXPECT_TRUE(std::equal(queue.begin(), queue.end(), order.begin() + queues[sm].first));
  }
  auto tasks = records<MkTaskRecord>(toy.blob, h.tasksOffset, h.numTasks);
  auto waits = records<MkWaitRecord>(toy.blob, h.waitsOffset, h.numWaits);
  for (const Task &task : toy.model.graph.tasks) {
    const MkTaskRecord &record = tasks[task.id];
    EXPECT_EQ(record.kind, static_cast<uint8_t>(task.kind));
    EXPECT_EQ(record.op, task.op);
    EXPECT_EQ(record.begin, task.begin);
    EXPECT_EQ(record.end, task.end);
    EXPECT_EQ(record.trigger, task.trigger);
    ASSERT_EQ(record.numWaits, task.waits.size());
    for (size_t w = 0; w < task.waits.size(); ++w) {
      EXPECT_EQ(waits[record.firstWait + w].event, task.waits[w].event);
      EXPECT_EQ(waits[record.firstWait + w].stepOffset, task.waits[w].stepOffset);
    }
  }
  auto events = records<MkEventRecord>(toy.blob, h.eventsOffset, h.numEvents);
  for (const Event &event : toy.model.graph.events)
    EXPECT_EQ(events[event.id].triggerCount, event.triggerCount);
}

TEST(ScheduleBlob, QueueEntriesHoldEachQueuedTaskWithItsOperationAndResolvedWaits) {
  ToyBlob toy;
  const MkBlobHeader &h = toy.header;
  auto order = records<uint32_t>(toy.blob, h.taskOrderOffset, h.numTasks);
  auto tasks = records<MkTaskRecord>(toy.blob, h.tasksOffset, h.numTasks);
  auto operations = records<MkOperationRecord>(toy.blob, h.operationsOffset, h.numOperations);
  auto entries = records<MkQueueEntry>(toy.blob, h.entriesOffset, h.numTasks);
  const TaskGraph &graph = toy.model.graph;
  size_t resolved = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const MkQueueEntry &entry = entries[k];
    const Task &task = graph.tasks[order[k]];
    EXPECT_EQ(entry.id, order[k]);
    EXPECT_EQ(std::memcmp(&entry.task, &tasks[order[k]], sizeof(MkTaskRecord)), 0);
    EXPECT_EQ(std::memcmp(&entry.operation, &operations[task.op], sizeof(MkOperationRecord)), 0);
    for (size_t w = 0; w < MK_ENTRY_WAITS; ++w) {
      if (w >= task.waits.size()) {
        EXPECT_EQ(entry.waits[w].event, 0u);
        EXPECT_EQ(entry.waits[w].triggerCount, 0u);
        continue;
      }
      EXPECT_EQ(entry.waits[w].event, task.waits[w].event);
      EXPECT_EQ(entry.waits[w].stepOffset, task.waits[w].stepOffset);
      EXPECT_EQ(entry.waits[w].triggerCount, graph.events[task.waits[w].event].triggerCount);
      ++resolved;
    }
  }
  EXPECT_GT(resolved, 0u) << "the toy graph's tasks have waits to resolve";
}

// Inline merges: after every queue, by id, in taskOrder and the entries;
// each chunk's entry names its merge's, every other entry none.
TEST(ScheduleBlob, InlineTasksFollowTheQueuesAndTheirTriggersNameThem) {
  toy::ToyModel model = toy::buildToyModel(4);
  toy::inlineMerges(model);
  std::unique_ptr<BuiltArtifact> built = toy::buildToyArtifact(model);
  const std::vector<uint8_t> &blob = built->artifact.scheduleBlob;
  MkBlobHeader h = readBlobHeader(blob);
  const TaskGraph &graph = model.graph;
  ASSERT_EQ(h.numTasks, graph.tasks.size());
  auto order = records<uint32_t>(blob, h.taskOrderOffset, h.numTasks);
  auto entries = records<MkQueueEntry>(blob, h.entriesOffset, h.numTasks);
  auto queues = records<MkQueue>(blob, h.queuesOffset, h.numSms);
  uint32_t queued = 0;
  for (const MkQueue &queue : queues)
    queued += queue.count;
  std::vector<uint32_t> inlined;
  for (const Task &task : graph.tasks)
    if (task.runsInline)
      inlined.push_back(task.id);
  ASSERT_FALSE(inlined.empty());
  ASSERT_EQ(queued + inlined.size(), order.size());
  for (size_t i = 0; i < inlined.size(); ++i)
    EXPECT_EQ(order[queued + i], inlined[i]);
  size_t naming = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const Task &task = graph.tasks[order[k]];
    EXPECT_EQ(entries[k].id, order[k]);
    uint32_t expected = MK_NO_INLINE;
    for (size_t i = 0; i < inlined.size(); ++i)
      if (graph.tasks[inlined[i]].waits[0].event == task.trigger)
        expected = static_cast<uint32_t>(queued + i);
    EXPECT_EQ(entries[k].inlineEntry, expected) << "task " << task.id;
    if (expected != MK_NO_INLINE) {
      EXPECT_EQ(task.kind, TaskKind::AttentionChunk);
      ++naming;
    }
  }
  EXPECT_GT(naming, inlined.size()) << "every chunk of a KV head names its merge";
}

TEST(ScheduleBlob, BuffersGetDisjointAlignedPlacesInTheirArenas) {
  ToyBlob toy;
  const TaskGraph &graph = toy.model.graph;
  auto operations = toy.operations();
  std::map<uint32_t, uint64_t> activation, kv; // buffer -> offset
  auto place = [&](std::map<uint32_t, uint64_t> &arena, uint32_t buffer, uint64_t offset) {
    auto [it, inserted] = arena.emplace(buffer, offset);
    EXPECT_EQ(it->second, offset) << "buffer " << graph.buffers[buffer].name << " has two places";
  };
  for (size_t i = 0; i < graph.operations.size(); ++i) {
    const Operation &op = graph.operations[i];
    const MkOperationRecord &record = operations[i];
    place(activation, op.input, record.input);
    place(activation, op.output, record.output);
    if (op.epilogue == Epilogue::Residual)
      place(activation, op.residual, record.residual);
    else
      EXPECT_EQ(record.residual, MK_NO_OFFSET);
    if (op.kind == OpKind::Attention) {
      place(activation, op.partials, record.partials);
      place(kv, op.keyCache, record.keyCache);
      place(kv, op.valueCache, record.valueCache);
    }
  }
  EXPECT_EQ(activation[graph.tokenBuffer], toy.header.tokenSlot);
  EXPECT_EQ(activation[graph.logitsBuffer], toy.header.logitsOffset);
  for (auto [arena, total] : {std::pair{&activation, toy.header.activationElements},
                              std::pair{&kv, toy.header.kvElements}}) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (auto [buffer, offset] : *arena) {
      uint64_t elements =
          graph.buffers[buffer].kind == BufferKind::Token ? 2 : graph.buffers[buffer].elements;
      EXPECT_EQ(offset % kArenaAlignment, 0u) << graph.buffers[buffer].name;
      ranges.push_back({offset, offset + elements});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 0; i < ranges.size(); ++i) {
      EXPECT_LE(ranges[i].second, total);
      if (i > 0)
        EXPECT_LE(ranges[i - 1].second, ranges[i].first);
    }
  }
}

// A bf16 cache packs two elements into each f32 element of the KV arena.
TEST(ScheduleBlob, Bf16CachesTakeHalfTheirElements) {
  toy::ToyModel model = toy::buildToyModel(4);
  ArenaLayout f32 = layOutArenas(model.graph);
  for (Buffer &buffer : model.graph.buffers)
    if (buffer.kind == BufferKind::KVCache)
      buffer.element = BufferElement::BF16;
  ArenaLayout bf16 = layOutArenas(model.graph);
  EXPECT_EQ(bf16.activationElements, f32.activationElements);
  uint64_t end = 0;
  for (uint32_t i = 0; i < model.graph.buffers.size(); ++i) {
    const Buffer &buffer = model.graph.buffers[i];
    if (buffer.kind != BufferKind::KVCache) {
      EXPECT_EQ(bf16.offset[i], f32.offset[i]) << buffer.name;
      continue;
    }
    EXPECT_EQ(bf16.offset[i] % kArenaAlignment, 0u);
    EXPECT_GE(bf16.offset[i], end) << buffer.name << " overlaps the cache before it";
    end = bf16.offset[i] + (buffer.elements + 1) / 2;
  }
  EXPECT_EQ(bf16.kvElements, end);
  EXPECT_LT(bf16.kvElements, f32.kvElements);
}

TEST(ScheduleBlob, ParamsHoldTheRoundedNormsBiasesAndFrequencies) {
  ToyBlob toy;
  const TaskGraph &graph = toy.model.graph;
  auto operations = toy.operations();
  std::vector<float> params = toy.params();
  auto at = [&](uint64_t offset, size_t count) {
    EXPECT_EQ(offset % kParamsAlignment, 0u);
    return std::vector<float>(params.begin() + offset, params.begin() + offset + count);
  };
  int biased = 0, normed = 0, rotated = 0;
  for (size_t i = 0; i < graph.operations.size(); ++i) {
    const Operation &op = graph.operations[i];
    const MkOperationRecord &record = operations[i];
    if (!op.norm.name.empty()) {
      EXPECT_EQ(at(record.norm, op.norm.rows), toy.rounded(op.norm.name)) << op.name;
      ++normed;
    }
    if (!op.biases.empty()) {
      std::vector<float> stacked;
      for (const WeightRef &bias : op.biases) {
        std::vector<float> values = toy.rounded(bias.name);
        stacked.insert(stacked.end(), values.begin(), values.end());
      }
      EXPECT_EQ(at(record.bias, stacked.size()), stacked) << op.name;
      ++biased;
    } else {
      EXPECT_EQ(record.bias, MK_NO_OFFSET);
    }
    if (!op.qNorm.name.empty())
      EXPECT_EQ(at(record.qNorm, op.qNorm.rows), toy.rounded(op.qNorm.name));
    if (!op.invFreq.empty()) {
      EXPECT_EQ(at(record.invFreq, op.invFreq.size()), op.invFreq);
      ++rotated;
    }
    for (size_t w = 0; w < MK_MAX_GEMV_WEIGHTS; ++w) {
      if (w >= op.weights.size()) {
        EXPECT_EQ(record.weights[w], MK_NO_OFFSET);
        continue;
      }
      auto entry =
          std::find_if(toy.built->artifact.weights.begin(), toy.built->artifact.weights.end(),
                       [&](const WeightEntry &e) { return e.name == op.weights[w].name; });
      ASSERT_NE(entry, toy.built->artifact.weights.end());
      EXPECT_EQ(record.weights[w], entry->offset);
      EXPECT_EQ(record.weightRows[w], entry->rows);
    }
  }
  EXPECT_GT(biased, 0);
  EXPECT_GT(normed, 0);
  EXPECT_EQ(rotated, 2);
}

// A batch (row r sequence r): the header says its rows and sequences, the
// token slot holds one token a row, the vocabulary is a row's logits. A
// prefill chunk, and a batch whose buffer rows are not its operations'
// lengths (the device finds row r by them), are refused by name.
TEST(ScheduleBlob, ABatchsHeaderSaysItsRows) {
  toy::ToyModel model = toy::buildToyModel(4);
  auto built = toy::buildToyArtifact(model);
  auto params = [&](const std::string &name) { return model.weights.find(name)->values; };
  TaskGraph batch = model.graph;
  toy::makeRows(batch, 3, 3);
  std::vector<uint8_t> blob =
      buildScheduleBlob(batch, model.schedule, built->artifact.weights, params);
  MkBlobHeader header = readBlobHeader(blob);
  EXPECT_EQ(header.rows, 3u);
  EXPECT_EQ(header.sequences, 3u);
  EXPECT_EQ(header.vocab, static_cast<uint64_t>(toy::kVocab));
  ArenaLayout arenas = layOutArenas(batch);
  uint64_t afterTokens = header.activationElements;
  for (uint32_t b = 0; b < batch.buffers.size(); ++b)
    if (arenas.offset[b] > header.tokenSlot && batch.buffers[b].kind != BufferKind::KVCache)
      afterTokens = std::min(afterTokens, arenas.offset[b]);
  EXPECT_GE(afterTokens - header.tokenSlot, 2u * 3u) << "an int64 token a row";

  auto refusal = [&](const TaskGraph &graph) {
    try {
      buildScheduleBlob(graph, model.schedule, built->artifact.weights, params);
    } catch (const ScheduleBlobError &error) {
      return std::string(error.what());
    }
    return std::string();
  };
  TaskGraph chunk = model.graph;
  toy::makeRows(chunk, 4, 1);
  EXPECT_NE(refusal(chunk).find("4 rows of 1 sequence(s): the device runs decode and batches"),
            std::string::npos)
      << refusal(chunk);
  TaskGraph uneven = batch;
  uneven.buffers[uneven.operations[0].output].elements += 3; // a row one element longer
  EXPECT_NE(refusal(uneven).find("operation 'embed': a row of its output 'embedded' is 17 "
                                 "elements, the device expects 16"),
            std::string::npos)
      << refusal(uneven);
}

TEST(ScheduleBlob, IsTheSameBytesEveryTime) {
  ToyBlob first, second;
  EXPECT_EQ(first.blob, second.blob);
}

TEST(ScheduleBlob, RefusesWhatItCannotHold) {
  toy::ToyModel model = toy::buildToyModel(4);
  auto built = toy::buildToyArtifact(model);
  auto params = [&](const std::string &name) { return model.weights.find(name)->values; };
  auto message = [&](const TaskGraph &graph, const std::vector<WeightEntry> &index,
                     const std::function<std::vector<float>(const std::string &)> &small) {
    try {
      buildScheduleBlob(graph, model.schedule, index, small);
    } catch (const ScheduleBlobError &error) {
      return std::string(error.what());
    }
    return std::string();
  };

  std::vector<WeightEntry> missing = built->artifact.weights;
  missing.erase(std::find_if(missing.begin(), missing.end(),
                             [](const WeightEntry &e) { return e.name == "lm_head"; }));
  EXPECT_NE(
      message(model.graph, missing, params).find("'lm_head', which is not in the weight index"),
      std::string::npos);

  std::vector<WeightEntry> reshaped = built->artifact.weights;
  for (WeightEntry &entry : reshaped)
    if (entry.name == "lm_head")
      entry.rows += 1;
  EXPECT_NE(message(model.graph, reshaped, params).find("weight 'lm_head' is ["),
            std::string::npos);

  EXPECT_NE(message(model.graph, built->artifact.weights,
                    [](const std::string &) { return std::vector<float>(3); })
                .find("has 3 values"),
            std::string::npos);

  TaskGraph stacked = model.graph;
  for (Operation &op : stacked.operations)
    if (op.kind == OpKind::Gemv && op.name == "lm_head")
      op.weights.resize(MK_MAX_GEMV_WEIGHTS + 1, op.weights[0]);
  EXPECT_NE(message(stacked, built->artifact.weights, params).find("stacks 5 weights"),
            std::string::npos);
}

} // namespace
} // namespace mk
