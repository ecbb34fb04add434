// The TASKGRAPH section's encoding: the toy graph survives the round trip
// field for field, and hostile bytes — truncated anywhere, corrupted
// anywhere, counts that claim more than the section holds, unknown
// enumerators, trailing bytes — are refused or decoded without a crash.
#include "ToyTaskGraph.h"

#include "core/validator/Validator.h"
#include "runtime/format/TaskGraphCodec.h"

#include <gtest/gtest.h>

#include <random>

namespace mk {
namespace {

bool sameRef(const WeightRef &a, const WeightRef &b) {
  return a.name == b.name && a.rows == b.rows && a.cols == b.cols;
}

void expectSameGraph(const TaskGraph &a, const TaskGraph &b) {
  EXPECT_EQ(a.maxContext, b.maxContext);
  EXPECT_EQ(a.tokenBuffer, b.tokenBuffer);
  EXPECT_EQ(a.logitsBuffer, b.logitsBuffer);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].kind, b.buffers[i].kind);
    EXPECT_EQ(a.buffers[i].elements, b.buffers[i].elements);
    EXPECT_EQ(a.buffers[i].element, b.buffers[i].element);
  }
  ASSERT_EQ(a.operations.size(), b.operations.size());
  for (size_t i = 0; i < a.operations.size(); ++i) {
    const Operation &x = a.operations[i], &y = b.operations[i];
    EXPECT_TRUE(x.kind == y.kind && x.name == y.name && x.layer == y.layer && x.input == y.input &&
                x.output == y.output && x.residual == y.residual && x.eps == y.eps &&
                x.epilogue == y.epilogue && x.inputLength == y.inputLength &&
                x.outputLength == y.outputLength && x.numHeads == y.numHeads &&
                x.numKvHeads == y.numKvHeads && x.headDim == y.headDim && x.scale == y.scale &&
                x.rotaryDim == y.rotaryDim && x.invFreq == y.invFreq &&
                x.interleaved == y.interleaved && x.keyCache == y.keyCache &&
                x.valueCache == y.valueCache && x.partials == y.partials &&
                x.chunkSize == y.chunkSize && x.numChunks == y.numChunks &&
                x.chunksPerRound == y.chunksPerRound && x.window == y.window)
        << "operation " << i;
    EXPECT_TRUE(sameRef(x.norm, y.norm) && sameRef(x.qNorm, y.qNorm) && sameRef(x.kNorm, y.kNorm));
    ASSERT_EQ(x.weights.size(), y.weights.size());
    for (size_t w = 0; w < x.weights.size(); ++w)
      EXPECT_TRUE(sameRef(x.weights[w], y.weights[w]));
    ASSERT_EQ(x.biases.size(), y.biases.size());
    for (size_t w = 0; w < x.biases.size(); ++w)
      EXPECT_TRUE(sameRef(x.biases[w], y.biases[w]));
  }
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const Task &x = a.tasks[i], &y = b.tasks[i];
    EXPECT_TRUE(x.id == y.id && x.kind == y.kind && x.op == y.op && x.begin == y.begin &&
                x.end == y.end && x.trigger == y.trigger && x.weightBytes == y.weightBytes)
        << "task " << i;
    ASSERT_EQ(x.waits.size(), y.waits.size());
    for (size_t w = 0; w < x.waits.size(); ++w)
      EXPECT_TRUE(x.waits[w].event == y.waits[w].event &&
                  x.waits[w].stepOffset == y.waits[w].stepOffset);
    ASSERT_EQ(x.reads.size(), y.reads.size());
    for (size_t r = 0; r < x.reads.size(); ++r)
      EXPECT_TRUE(x.reads[r].buffer == y.reads[r].buffer && x.reads[r].begin == y.reads[r].begin &&
                  x.reads[r].end == y.reads[r].end);
    ASSERT_EQ(x.writes.size(), y.writes.size());
  }
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i)
    EXPECT_TRUE(a.events[i].id == b.events[i].id && a.events[i].name == b.events[i].name &&
                a.events[i].triggerCount == b.events[i].triggerCount);
}

TEST(TaskGraphCodec, RoundTripsTheToyGraphFieldForField) {
  for (uint32_t sms : {1u, 4u, 7u}) {
    toy::ToyModel model = toy::buildToyModel(sms);
    std::vector<uint8_t> bytes = encodeTaskGraph(model.graph, model.schedule);
    TaskGraph graph;
    Schedule schedule;
    ASSERT_EQ(decodeTaskGraph(bytes, graph, schedule), "");
    expectSameGraph(model.graph, graph);
    EXPECT_EQ(schedule.numSms, model.schedule.numSms);
    EXPECT_EQ(schedule.queues, model.schedule.queues);
    EXPECT_EQ(encodeTaskGraph(graph, schedule), bytes);
    EXPECT_EQ(validateSchedule(graph, schedule), "");
  }
}

TEST(TaskGraphCodec, KeepsTheCachesElement) {
  toy::ToyModel model = toy::buildToyModel(4);
  for (Buffer &buffer : model.graph.buffers)
    if (buffer.kind == BufferKind::KVCache)
      buffer.element = BufferElement::BF16;
  std::vector<uint8_t> bytes = encodeTaskGraph(model.graph, model.schedule);
  TaskGraph graph;
  Schedule schedule;
  ASSERT_EQ(decodeTaskGraph(bytes, graph, schedule), "");
  int caches = 0;
  for (size_t i = 0; i < graph.buffers.size(); ++i) {
    EXPECT_EQ(graph.buffers[i].element, model.graph.buffers[i].element) << i;
    caches += graph.buffers[i].element == BufferElement::BF16;
  }
  EXPECT_EQ(caches, 4); // two layers' keys and values
}

TEST(TaskGraphCodec, RefusesEveryTruncation) {
  toy::ToyModel model = toy::buildToyModel();
  std::vector<uint8_t> bytes = encodeTaskGraph(model.graph, model.schedule);
  for (size_t size = 0; size < bytes.size(); ++size) {
    TaskGraph graph;
    Schedule schedule;
    std::string error = decodeTaskGraph(std::span(bytes).first(size), graph, schedule);
    ASSERT_FALSE(error.empty()) << "accepted " << size << " of " << bytes.size() << " bytes";
    EXPECT_EQ(error.rfind("task graph: ", 0), 0u) << error;
  }
  TaskGraph graph;
  Schedule schedule;
  std::string error = decodeTaskGraph(std::span(bytes).first(bytes.size() / 2), graph, schedule);
  EXPECT_NE(error.find(" at byte "), std::string::npos) << error;
}

TEST(TaskGraphCodec, NamesWhereItFails) {
  toy::ToyModel model = toy::buildToyModel();
  std::vector<uint8_t> bytes = encodeTaskGraph(model.graph, model.schedule);
  TaskGraph graph;
  Schedule schedule;

  std::vector<uint8_t> magic = bytes;
  magic[0] ^= 1;
  EXPECT_EQ(decodeTaskGraph(magic, graph, schedule),
            "task graph: bad magic at byte 0 (expected \"MKTG\")");
  std::vector<uint8_t> version = bytes;
  version[4] = 9;
  EXPECT_EQ(decodeTaskGraph(version, graph, schedule),
            "task graph: unsupported encoding version 9 (this reader supports " +
                std::to_string(kTaskGraphVersion) + ")");

  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(decodeTaskGraph(trailing, graph, schedule),
            "task graph: 1 trailing bytes at byte " + std::to_string(bytes.size()));

  // The buffer count follows magic, version, maxContext, rows, sequences,
  // ranks, rank, token and logits buffers.
  constexpr size_t kBufferCount = 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 4;
  std::vector<uint8_t> count = bytes;
  count[kBufferCount] = count[kBufferCount + 1] = count[kBufferCount + 2] =
      count[kBufferCount + 3] = 0xff;
  std::string error = decodeTaskGraph(count, graph, schedule);
  EXPECT_NE(error.find("a count of 4294967295 (buffer) runs past the end"), std::string::npos)
      << error;

  // The first buffer's kind follows its name (a 4-byte length, then the bytes).
  std::vector<uint8_t> kind = bytes;
  kind[kBufferCount + 4 + 4 + model.graph.buffers[0].name.size()] = 9;
  error = decodeTaskGraph(kind, graph, schedule);
  EXPECT_NE(error.find("unknown enumerator 9"), std::string::npos) << error;
  EXPECT_NE(error.find("(buffer 0)"), std::string::npos) << error;
}

TEST(TaskGraphCodec, NeverCrashesOnRandomCorruption) {
  toy::ToyModel model = toy::buildToyModel();
  std::vector<uint8_t> bytes = encodeTaskGraph(model.graph, model.schedule);
  std::mt19937_64 random(42);
  int refusedByDecoder = 0, refusedByValidator = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    int flips = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < flips; ++i)
      corrupt[random() % corrupt.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
    TaskGraph graph;
    Schedule schedule;
    if (!decodeTaskGraph(corrupt, graph, schedule).empty())
      ++refusedByDecoder;
    else if (!validateSchedule(graph, schedule).empty())
      ++refusedByValidator;
  }
  EXPECT_GT(refusedByDecoder, 0);
  EXPECT_GT(refusedByValidator, 0);
}

} // namespace
} // namespace mk
