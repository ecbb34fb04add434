// The validator accepts the toy graph on any number of SMs and refuses each
// kind of broken graph with a message naming what is wrong; random
// corruption never crashes it.
#include "ToyTaskGraph.h"

#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/Validator.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <random>

namespace mk {
namespace {

using toy::buildToyModel;
using toy::findTask;

// Applies `mutate` to a fresh toy model and returns the validator's verdict.
std::string validateMutated(const std::function<void(TaskGraph &, Schedule &)> &mutate) {
  toy::ToyModel model = buildToyModel();
  mutate(model.graph, model.schedule);
  return validateSchedule(model.graph, model.schedule);
}

// The weight bytes a task's (changed) tile streams, as the compiler counts
// them, so that a mutation is refused for what it is meant to break.
void recountWeights(const TaskGraph &graph, Task &task) {
  task.weightBytes = describeKind(task.kind).weightElements(graph.operations[task.op], task) *
                     kBytesPerStreamedWeight;
}

void expectRefused(const std::function<void(TaskGraph &, Schedule &)> &mutate,
                   const std::vector<std::string> &fragments) {
  std::string message = validateMutated(mutate);
  ASSERT_FALSE(message.empty()) << "accepted";
  for (const std::string &fragment : fragments)
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "message: " << message << "\nlacks: " << fragment;
}

TEST(TaskGraphValidator, AcceptsTheToyGraphOnAnyNumberOfSms) {
  for (uint32_t sms : {1u, 2u, 3u, 4u, 7u, 64u}) {
    toy::ToyModel model = buildToyModel(sms);
    EXPECT_EQ(validateSchedule(model.graph, model.schedule), "") << sms << " SMs";
  }
}

TEST(TaskGraphValidator, RefusesAMissingDependency) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        graph.tasks[findTask(graph, TaskKind::Gemv, "layer0.o", 8)].waits.clear();
      },
      {"task", "Gemv 'layer0.o', rows [8, 16)", "reads buffer 'layer0.attended'",
       "no chain of waits"});
}

// The GPU's event counters are 32 bits and never reset within a launch: a
// context so long that an event's count would pass 2^32 is refused, whatever
// else fits (the caches and partials are only sizes here).
TEST(TaskGraphValidator, RefusesCountersThatWouldPassThirtyTwoBits) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        int64_t longer = (int64_t(1) << 31) - 1; // the longest context there is
        for (Buffer &buffer : graph.buffers)
          if (buffer.kind == BufferKind::KVCache)
            buffer.elements = buffer.elements / graph.maxContext * longer;
        for (Operation &op : graph.operations)
          if (op.kind == OpKind::Attention) {
            op.window = 0; // chunks for the whole context
            op.numChunks = (longer + op.chunkSize - 1) / op.chunkSize;
            graph.buffers[op.partials].elements =
                uint64_t(op.numHeads) * op.numChunks * (op.headDim + 2);
          }
        graph.maxContext = longer;
      },
      {"times a step: over 2147483647 steps its counter would pass the GPU's 32 bits"});
}

TEST(TaskGraphValidator, RefusesAContextPastThirtyOneBits) {
  expectRefused([](TaskGraph &graph, Schedule &) { graph.maxContext = int64_t(1) << 31; },
                {"maxContext is 2147483648, over the 2^31 - 1 positions"});
}

TEST(TaskGraphValidator, RefusesAMissingStepDependency) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        graph.tasks[findTask(graph, TaskKind::Embed, "embed", 8)].waits.clear();
      },
      {"Embed 'embed', rows [8, 16)", "previous step"});
}

TEST(TaskGraphValidator, RefusesWrongTriggerCounts) {
  for (int delta : {-1, 1})
    expectRefused(
        [delta](TaskGraph &graph, Schedule &) { graph.events[3].triggerCount += delta; },
        {"event 3", "trigger count"});
}

TEST(TaskGraphValidator, RefusesATaskInNoQueueOrInTwo) {
  expectRefused([](TaskGraph &, Schedule &schedule) { schedule.queues[1].erase(schedule.queues[1].begin()); },
                {"task 1 ", "no SM's queue"});
  expectRefused([](TaskGraph &, Schedule &schedule) { schedule.queues[2].push_back(5); },
                {"task 5 ", "queued twice"});
  expectRefused([](TaskGraph &, Schedule &schedule) { schedule.queues[1].push_back(1); },
                {"task 1 ", "queued twice"});
}

TEST(TaskGraphValidator, RefusesOutOfBoundsRanges) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        graph.tasks[findTask(graph, TaskKind::Gemv, "lm_head", 25)].reads[0].end = 17;
      },
      {"Gemv 'lm_head', rows [25, 37)", "declared read", "not within the 16 elements"});
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        uint32_t task = findTask(graph, TaskKind::Gemv, "lm_head", 25);
        graph.tasks[task].end = 38;
      },
      {"rows [25, 38)", "not a non-empty part"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.buffers[graph.logitsBuffer].elements = 30; },
                {"operation", "'lm_head'", "output buffer 'logits' has 30 elements"});
}

TEST(TaskGraphValidator, RefusesOverlappingWriters) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        Task &task = graph.tasks[findTask(graph, TaskKind::Gemv, "layer1.down", 0)];
        task.end = 10;
        task.writes[0].end = 10;
        task.reads[1].end = 10;
        recountWeights(graph, task);
      },
      {"Gemv 'layer1.down', rows [0, 10)", "Gemv 'layer1.down', rows [8, 16)", "both write",
       "[8, 10)"});
}

TEST(TaskGraphValidator, RefusesAWeightCountItsTileDoesNotGive) {
  // What the scheduler balances and inspect reports must be the tile's.
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        graph.tasks[findTask(graph, TaskKind::Gemv, "layer1.down", 0)].weightBytes = 999;
      },
      {"Gemv 'layer1.down', rows [0, 8)", "streams 999 bytes of weights, its tile"});
}

TEST(TaskGraphValidator, RefusesWritesItDoesNotDeclare) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        // Chunk 0 of KV head 1 writes the two cache slots, then its partials.
        Task &chunk = graph.tasks[findTask(graph, TaskKind::AttentionChunk, "layer0.attention", 1)];
        chunk.writes.erase(chunk.writes.begin());
      },
      {"AttentionChunk 'layer0.attention', kv head 1, chunk 0", "declares that it writes"});
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        graph.tasks[findTask(graph, TaskKind::AttentionChunk, "layer1.attention", 1)].reads.pop_back();
      },
      {"AttentionChunk 'layer1.attention', kv head 1, chunk 0", "reads buffer 'layer1.qkv' [56, 64)",
       "do not cover"});
}

TEST(TaskGraphValidator, RefusesAQueueOrderThatDeadlocks) {
  expectRefused(
      [](TaskGraph &graph, Schedule &schedule) {
        // Put an embedding tile behind a task that waits for it.
        uint32_t embed = findTask(graph, TaskKind::Embed, "embed", 0);
        uint32_t consumer = findTask(graph, TaskKind::Gemv, "layer0.qkv", 16);
        auto &from = schedule.queues[embed % schedule.numSms];
        from.erase(std::find(from.begin(), from.end(), embed));
        schedule.queues[consumer % schedule.numSms].push_back(embed);
      },
      {"deadlocks", "is stuck at", "of step 0", "event"});
}

TEST(TaskGraphValidator, RefusesACycle) {
  expectRefused(
      [](TaskGraph &graph, Schedule &) {
        uint32_t later = graph.tasks[findTask(graph, TaskKind::Gemv, "layer0.o", 0)].trigger;
        graph.tasks[findTask(graph, TaskKind::Gemv, "layer0.qkv", 0)].waits.push_back({later, 0});
      },
      {"deadlocks"});
}

TEST(TaskGraphValidator, RefusesATaskOutsideTheStepFunnel) {
  // A task nobody waits for may still run when the next step starts.
  expectRefused(
      [](TaskGraph &graph, Schedule &schedule) {
        Task extra = graph.tasks[findTask(graph, TaskKind::Gemv, "lm_head", 0)];
        Operation op = graph.operations[extra.op];
        op.name = "dangling";
        op.output = graph.buffers.size();
        graph.buffers.push_back({"dangling", BufferKind::Scratch, 37});
        graph.operations.push_back(op);
        graph.events.push_back({static_cast<uint32_t>(graph.events.size()), "dangling", 1});
        extra.id = graph.tasks.size();
        extra.op = graph.operations.size() - 1;
        extra.trigger = graph.events.size() - 1;
        extra.end = 37;
        extra.writes = {{op.output, 0, 37}};
        recountWeights(graph, extra);
        graph.tasks.push_back(extra);
        schedule.queues[0].push_back(extra.id);
      },
      {"'dangling'", "does not happen before", "Argmax"});
}

TEST(TaskGraphValidator, RefusesOutOfRangeIds) {
  auto anyTask = [](TaskGraph &graph) -> Task & {
    return graph.tasks[findTask(graph, TaskKind::Gemv, "layer0.gate_up", 8)];
  };
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).waits[0].event = 999; },
                {"Gemv 'layer0.gate_up', rows [8, 16)", "event 999 (out of range"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).waits[0].stepOffset = -2; },
                {"step offset -2"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).trigger = 999; },
                {"triggers event 999 (out of range"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).op = 999; },
                {"operation 999 (out of range)"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).writes[0].buffer = 999; },
                {"buffer 999 (out of range"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).id = 3; }, {"has id 3"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).kind = TaskKind(77); },
                {"unknown kind"});
  expectRefused([&](TaskGraph &graph, Schedule &) { anyTask(graph).kind = TaskKind::AttentionMerge; },
                {"is a AttentionMerge task of a Gemv operation"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.operations[3].input = 999; },
                {"operation 3", "buffer 999 is out of range"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.events[2].id = 7; }, {"event 2", "has id 7"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.tokenBuffer = 999; }, {"token buffer"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.logitsBuffer = 999; }, {"logits buffer"});
  expectRefused([](TaskGraph &, Schedule &schedule) { schedule.queues[3][0] = 999; },
                {"SM 3", "task 999 (out of range"});
  expectRefused([](TaskGraph &, Schedule &schedule) { schedule.numSms = 5; }, {"4 queues for 5 SMs"});
}

TEST(TaskGraphValidator, RefusesHugeAndInconsistentSizes) {
  auto attention = [](TaskGraph &graph) -> Operation & {
    return graph.operations[graph.tasks[findTask(graph, TaskKind::AttentionMerge, "layer1.attention", 0)].op];
  };
  constexpr uint64_t huge = std::numeric_limits<uint64_t>::max();
  expectRefused([](TaskGraph &graph, Schedule &) { graph.operations[1].outputLength = huge; },
                {"operation 1", "stack"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.buffers[2].elements = huge; },
                {"input buffer", "elements, expected exactly 64"});
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).headDim = int64_t(1) << 62; },
                {"'layer1.attention'"});
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).numChunks = 1 << 30; },
                {"numChunks"});
  // The span rule divides by chunksPerRound, and more than numChunks would
  // spread a step's positions past the partials.
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).chunksPerRound = 0; },
                {"chunksPerRound 0", "[1, numChunks"});
  expectRefused(
      [&](TaskGraph &graph, Schedule &) {
        attention(graph).chunksPerRound = attention(graph).numChunks + 1;
      },
      {"chunksPerRound", "[1, numChunks"});
  // The toy's layer 1 has a window of 9: its 3 chunks of 4 cover the window.
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).window = -1; },
                {"window -1", "[0, 2^31)"});
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).window = 4; },
                {"numChunks 3", "ceil(4 positions of its window / chunkSize 4) = 1"});
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).numKvHeads = 3; },
                {"not a multiple"});
  expectRefused([&](TaskGraph &graph, Schedule &) { attention(graph).invFreq.pop_back(); },
                {"rotary frequencies"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.maxContext = 0; }, {"maxContext"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.maxContext = std::numeric_limits<int64_t>::max(); },
                {"maxContext is 9223372036854775807", "2^31 - 1"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.operations[1].eps = std::nanf(""); },
                {"eps"});
  expectRefused([](TaskGraph &graph, Schedule &) { graph.operations[1].weights[1].cols = 3; },
                {"weight 'layer0.k' is [16, 3], expected [16, 16]"});
}

// Only KV caches may keep bf16, and an attention's two caches keep the same.
TEST(TaskGraphValidator, RefusesBf16OutsideTheCachesAndMixedCaches) {
  auto attention = [](TaskGraph &graph) -> Operation & {
    return graph.operations[graph.tasks[findTask(graph, TaskKind::AttentionMerge, "layer1.attention", 0)].op];
  };
  toy::ToyModel model = buildToyModel(3);
  for (Buffer &buffer : model.graph.buffers)
    if (buffer.kind == BufferKind::KVCache)
      buffer.element = BufferElement::BF16;
  EXPECT_EQ(validateSchedule(model.graph, model.schedule), "");
  expectRefused([](TaskGraph &graph, Schedule &) { graph.buffers[2].element = BufferElement::BF16; },
                {"only a KV cache may keep bf16"});
  expectRefused(
      [](TaskGraph &graph, Schedule &) { graph.buffers[2].element = static_cast<BufferElement>(7); },
      {"7-coded elements"});
  expectRefused(
      [&](TaskGraph &graph, Schedule &) {
        graph.buffers[attention(graph).keyCache].element = BufferElement::BF16;
      },
      {"'layer1.attention'", "keys and its values in different element types"});
}

// The logits' picks (Operation::picks): the toy graph with them validates,
// at one row and at several, and each way they can be inconsistent is named.
TEST(TaskGraphValidator, RefusesInconsistentLogitPicks) {
  toy::ToyModel model = buildToyModel(3);
  toy::addLogitPicks(model.graph);
  EXPECT_EQ(validateSchedule(model.graph, model.schedule), "");
  auto withPicks = [](const std::function<void(TaskGraph &)> &mutate) {
    return [mutate](TaskGraph &graph, Schedule &) {
      toy::addLogitPicks(graph);
      mutate(graph);
    };
  };
  auto head = [](TaskGraph &graph) -> Task & {
    return graph.tasks[findTask(graph, TaskKind::Gemv, "lm_head", 13)];
  };
  expectRefused(withPicks([&](TaskGraph &graph) { head(graph).ordinal = 3; }),
                {"lm_head", "writes pick 3 of 3"});
  expectRefused(withPicks([&](TaskGraph &graph) {
                  head(graph).ordinal = 0;
                  head(graph).writes = deriveFootprint(graph, head(graph)).writes;
                }),
                {"logits.picks"});
  expectRefused(withPicks([&](TaskGraph &graph) { graph.buffers.back().elements = 4; }),
                {"its picks buffer 'logits.picks' has 4 elements, expected exactly 6"});
  expectRefused(withPicks([&](TaskGraph &graph) { graph.operations.back().numPicks = 4; }),
                {"'argmax'", "reads picks", "(4 a row)", "'lm_head' writes picks", "(3 a row)"});
  expectRefused(withPicks([&](TaskGraph &graph) {
                  for (Operation &op : graph.operations)
                    if (op.kind == OpKind::Argmax)
                      op.picks = kNoBuffer;
                }),
                {"numPicks 3 but no picks buffer"});
  expectRefused(withPicks([&](TaskGraph &graph) {
                  graph.operations[0].picks = graph.operations.back().picks;
                }),
                {"'embed'", "has picks"});
  // A read of a pick no tile writes (one slot more than tiles).
  expectRefused(withPicks([&](TaskGraph &graph) {
                  graph.buffers.back().elements = 8;
                  for (Operation &op : graph.operations)
                    if (op.picks != kNoBuffer)
                      op.numPicks = 4;
                  for (Task &task : graph.tasks)
                    if (task.kind == TaskKind::Argmax)
                      task.reads = deriveFootprint(graph, task).reads;
                }),
                {"no task writes"});

  toy::ToyModel rows = buildToyModel(3);
  toy::makeRows(rows.graph, 3, 1);
  toy::addLogitPicks(rows.graph);
  EXPECT_EQ(validateSchedule(rows.graph, rows.schedule), "");
}

// Inline tasks (Task::runsInline): the toy graph with inline merges
// validates on any number of SMs, and each way an inline task can be
// misplaced is named.
TEST(TaskGraphValidator, PlacesInlineTasksOnlyWhereTheyCanRun) {
  for (uint32_t sms : {1u, 3u, 7u}) {
    toy::ToyModel model = buildToyModel(sms);
    toy::inlineMerges(model);
    EXPECT_EQ(validateSchedule(model.graph, model.schedule), "") << sms << " SMs";
  }
  auto merge = [](TaskGraph &graph, uint64_t group) -> Task & {
    constexpr uint64_t kGroupLength = toy::kHeads / toy::kKvHeads * toy::kHeadDim;
    return graph.tasks[findTask(graph, TaskKind::AttentionMerge, "layer0.attention",
                                group * kGroupLength)];
  };
  auto inlined = [](const std::function<void(TaskGraph &, Schedule &)> &mutate) {
    return [mutate](TaskGraph &graph, Schedule &schedule) {
      toy::ToyModel model{graph, schedule, {}};
      toy::inlineMerges(model);
      graph = model.graph;
      schedule = model.schedule;
      mutate(graph, schedule);
    };
  };
  expectRefused([&](TaskGraph &graph, Schedule &) { merge(graph, 0).runsInline = true; },
                {"layer0.attention", "runs inline, yet SM"});
  expectRefused(inlined([&](TaskGraph &graph, Schedule &) {
                  merge(graph, 0).waits.push_back(merge(graph, 1).waits[0]);
                }),
                {"runs inline, so it needs exactly one wait", "it has 2"});
  expectRefused(inlined([&](TaskGraph &graph, Schedule &) { merge(graph, 0).waits[0].stepOffset = -1; }),
                {"runs inline, so it needs exactly one wait, on an event of its own step"});
  expectRefused(inlined([&](TaskGraph &graph, Schedule &) {
                  merge(graph, 1).waits = merge(graph, 0).waits;
                }),
                {"both run inline after"});
  // A chunk run inline would trigger the event its merge runs inline after.
  expectRefused(inlined([&](TaskGraph &graph, Schedule &schedule) {
                  Task &chunk = graph.tasks[findTask(graph, TaskKind::AttentionChunk, "layer0.attention", 0)];
                  chunk.runsInline = true;
                  for (std::vector<uint32_t> &queue : schedule.queues)
                    std::erase(queue, chunk.id);
                }),
                {"runs inline and triggers", "no chains"});
}

// Steps of several rows: the toy graph at M rows validates, and each way an
// M-row graph can be inconsistent is named.
std::string validateRows(int64_t rows, int64_t sequences,
                         const std::function<void(TaskGraph &)> &mutate = {}) {
  toy::ToyModel model = buildToyModel(3);
  toy::makeRows(model.graph, rows, sequences);
  if (mutate)
    mutate(model.graph);
  return validateSchedule(model.graph, model.schedule);
}

TEST(TaskGraphValidator, AcceptsStepsOfSeveralRows) {
  EXPECT_EQ(validateRows(3, 1), "");  // a prefill chunk
  EXPECT_EQ(validateRows(4, 4), "");  // a batch
  EXPECT_EQ(validateRows(kMaxStepRows, 1), "");
}

TEST(TaskGraphValidator, RefusesInconsistentRows) {
  auto expectRows = [](int64_t rows, int64_t sequences, const std::function<void(TaskGraph &)> &mutate,
                       const std::vector<std::string> &fragments) {
    std::string message = validateRows(rows, sequences, mutate);
    ASSERT_FALSE(message.empty()) << "accepted";
    for (const std::string &fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message: " << message << "\nlacks: " << fragment;
  };
  expectRows(3, 1, [](TaskGraph &graph) { graph.rows = 0; }, {"a step has 0 rows"});
  expectRows(3, 1, [](TaskGraph &graph) { graph.rows = kMaxStepRows + 1; }, {"rows, expected 1 to 1024"});
  expectRows(3, 1, [](TaskGraph &graph) { graph.sequences = 0; }, {"hold 0 sequences"});
  expectRows(3, 3, [](TaskGraph &graph) { graph.sequences = INT64_MAX; }, {"sequences, expected 1 to"});
  // The rows of every buffer, the tokens' and the caches' sequences.
  expectRows(3, 1, [](TaskGraph &graph) { graph.buffers[2].elements += 1; },
             {"not a multiple of the step's 3 rows"});
  expectRows(3, 1, [](TaskGraph &graph) { graph.buffers[graph.tokenBuffer].elements = 1; },
             {"not a Token buffer of one element per row (3)"});
  expectRows(2, 2, [](TaskGraph &graph) {
    for (Buffer &buffer : graph.buffers)
      if (buffer.kind == BufferKind::KVCache)
        buffer.elements -= 1;
  }, {"KV cache", "not a positive multiple of 2 sequences x maxContext 12"});
  expectRows(2, 2, [](TaskGraph &graph) {
    for (Buffer &buffer : graph.buffers)
      if (buffer.kind == BufferKind::KVCache)
        buffer.elements /= 2;
  }, {"key cache buffer 'layer0.keys' has 96 elements a sequence, expected exactly 192"});
  // An operation's buffer one row short.
  expectRows(3, 1, [](TaskGraph &graph) {
    graph.buffers[graph.operations[1].input].elements = 3 * 8;
  }, {"output buffer 'embedded' has 8 elements a row, expected at least 16"});
  // A task that declares one row fewer than it writes: row 2's range missing.
  expectRows(3, 1, [](TaskGraph &graph) {
    graph.tasks[findTask(graph, TaskKind::Gemv, "layer0.o", 0)].writes.pop_back();
  }, {"declares that it writes", "layer0.o"});
  // A KV range past the step's slots.
  expectRows(2, 1, [](TaskGraph &graph) {
    Task &chunk = graph.tasks[findTask(graph, TaskKind::AttentionChunk, "layer0.attention", 0)];
    for (BufferRange &range : chunk.writes)
      if (graph.buffers[range.buffer].kind == BufferKind::KVCache)
        range.end += 1000;
  }, {"the step's slots of that cache"});
}

// Random corruption of one field at a time: the validator must answer, not
// crash; ASan/UBSan builds make this sharper.
TEST(TaskGraphValidator, SurvivesRandomCorruption) {
  std::mt19937_64 random(7);
  const uint64_t values[] = {0, 1, 2, 7, 8, 15, 16, 17, 36, 37, 63, 64, 999, UINT32_MAX,
                             uint64_t(1) << 32, uint64_t(1) << 62, UINT64_MAX};
  auto pick = [&] { return values[random() % std::size(values)]; };
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    toy::ToyModel model = buildToyModel(1 + random() % 5);
    TaskGraph &graph = model.graph;
    Task &task = graph.tasks[random() % graph.tasks.size()];
    Operation &op = graph.operations[random() % graph.operations.size()];
    switch (random() % 18) {
    case 0: task.begin = pick(); break;
    case 1: task.end = pick(); break;
    case 2: task.op = pick(); break;
    case 3: task.trigger = pick(); break;
    case 4: if (!task.waits.empty()) task.waits[0].event = pick(); break;
    case 5: if (!task.reads.empty()) task.reads[0].end = pick(); break;
    case 6: if (!task.writes.empty()) task.writes[0].begin = pick(); break;
    case 7: op.inputLength = pick(); break;
    case 8: op.outputLength = pick(); break;
    case 9: op.numHeads = pick(); break;
    case 10: op.headDim = pick(); break;
    case 11: op.numChunks = pick(); break;
    case 12: graph.buffers[random() % graph.buffers.size()].elements = pick(); break;
    case 13: graph.events[random() % graph.events.size()].triggerCount = pick(); break;
    case 14: model.schedule.queues[0].push_back(pick()); break;
    case 15: op.output = pick(); break;
    case 16: op.chunksPerRound = pick(); break;
    case 17: op.window = pick(); break;
    }
    if (!validateSchedule(graph, model.schedule).empty()) {
      ++refused;
      continue;
    }
    // What passes must run cleanly, checked, or fail only on binding weights.
    std::unique_ptr<CpuExecutor> executor;
    try {
      executor = std::make_unique<CpuExecutor>(graph, model.schedule, model.weights,
                                               CpuExecutorOptions{.threaded = false, .checked = true});
    } catch (const ExecutionError &error) {
      EXPECT_NE(std::string(error.what()).find("weight"), std::string::npos) << error.what();
      continue;
    }
    EXPECT_NO_THROW(executor->generate({1, 2}, 2));
  }
  EXPECT_GT(refused, 2000);
}

} // namespace
} // namespace mk
