// lowerToTasks on hand-written fused modules: tiles cover every output row
// once and never straddle a weight or a KV group, reads and writes are what
// the validator derives from each tile, weight bytes add up, attention has
// its three phases per KV head, and the graph passes the validator.
#include "FusedModuleText.h"

#include "compiler/schedule/Scheduler.h"
#include "compiler/taskgraph/LowerToTasks.h"
#include "compiler/taskgraph/RowTiling.h"
#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/TaskFootprint.h"
#include "compiler/taskgraph/TileOperations.h"
#include "core/validator/Validator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace {

using namespace mk;
using test::ModelShape;

class LowerToTasksTest : public ::testing::Test {
protected:
  TaskGraph lower(const ModelShape &shape, uint32_t numSms = 8, int64_t maxContext = 64) {
    auto module = test::parseModule(context, test::fusedModuleText(shape));
    // Merge tasks: these tests check tiles that each write their rows once
    // (HeadProjection tiles add into theirs: HeadProjectionKind's tests).
    TargetDescription target;
    target.numSms = numSms;
    target.oProjByHead = TargetDescription::ByHead::Off;
    auto graph = lowerToTasks(*module, target, maxContext);
    EXPECT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
    return graph ? std::move(*graph) : TaskGraph();
  }

  std::vector<const Task *> tasksOf(const TaskGraph &graph, const std::string &opName) {
    std::vector<const Task *> tasks;
    for (const Task &task : graph.tasks)
      if (graph.operations[task.op].name == opName)
        tasks.push_back(&task);
    return tasks;
  }

  mlir::MLIRContext context;
};

ModelShape qwen2Shape() {
  ModelShape shape;
  shape.hidden = 96;
  shape.intermediate = 224;
  shape.layers = 3;
  shape.heads = 6;
  shape.kvHeads = 1;
  shape.vocab = 300;
  shape.qkvBiases = true;
  shape.tied = true;
  return shape;
}

ModelShape qwen3Shape() {
  ModelShape shape;
  shape.headDim = 32;
  shape.intermediate = 128;
  shape.qkNorm = true;
  shape.tied = true;
  return shape;
}

ModelShape mhaShape() {
  ModelShape shape;
  shape.hidden = 80;
  shape.intermediate = 144;
  shape.heads = 5;
  shape.kvHeads = 5;
  shape.vocab = 250;
  return shape;
}

TEST_F(LowerToTasksTest, OneOperationPerFusedOpNamedByRole) {
  TaskGraph graph = lower(ModelShape());
  std::vector<std::string> names;
  for (const Operation &op : graph.operations)
    names.push_back(op.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "embedding", "layer0.qkv", "layer0.attention", "layer0.o_proj",
                       "layer0.gate_up", "layer0.down", "layer1.qkv", "layer1.attention",
                       "layer1.o_proj", "layer1.gate_up", "layer1.down", "lm_head", "argmax"}));
  EXPECT_EQ(graph.operations[1].layer, 0);
  EXPECT_EQ(graph.operations[11].layer, -1);
  EXPECT_EQ(graph.buffers[graph.logitsBuffer].name, "lm_head");
  EXPECT_EQ(graph.buffers[graph.tokenBuffer].kind, BufferKind::Token);
}

TEST_F(LowerToTasksTest, EveryOutputRowIsWrittenExactlyOnce) {
  for (uint32_t sms : {1u, 3u, 8u, 132u}) {
    TaskGraph graph = lower(ModelShape(), sms);
    for (uint32_t op = 0; op < graph.operations.size(); ++op) {
      const Operation &operation = graph.operations[op];
      if (operation.kind == OpKind::Argmax)
        continue;
      std::vector<int> written(graph.buffers[operation.output].elements, 0);
      for (const Task &task : graph.tasks)
        for (const BufferRange &range : task.writes)
          if (task.op == op && range.buffer == operation.output)
            for (uint64_t i = range.begin; i < range.end; ++i)
              ++written[i];
      EXPECT_TRUE(std::all_of(written.begin(), written.end(), [](int n) { return n == 1; }))
          << operation.name << " on " << sms << " SMs";
    }
  }
}

TEST_F(LowerToTasksTest, QkvTilesStraddleNeitherWeightsNorKvGroups) {
  ModelShape shape;
  shape.heads = 8;
  shape.kvHeads = 2;
  shape.hidden = 128;
  for (uint32_t sms : {2u, 5u, 7u, 132u}) {
    TaskGraph graph = lower(shape, sms);
    uint64_t d = shape.headDim, q = shape.heads * d, kv = shape.kvHeads * d;
    uint64_t groupRows = q / shape.kvHeads;
    // Which piece a row belongs to: q, k or v, and its KV group.
    auto piece = [&](uint64_t row) {
      if (row < q)
        return row / groupRows;
      if (row < q + kv)
        return 100 + (row - q) / d;
      return 200 + (row - q - kv) / d;
    };
    auto tiles = tasksOf(graph, "layer0.qkv");
    EXPECT_LE(tiles.size(), std::max<uint64_t>(sms, 3 * shape.kvHeads));
    for (const Task *tile : tiles)
      EXPECT_EQ(piece(tile->begin), piece(tile->end - 1))
          << "rows [" << tile->begin << ", " << tile->end << ") on " << sms << " SMs";
  }
}

TEST_F(LowerToTasksTest, GemvTilesSpreadOverTheSms) {
  TaskGraph graph = lower(test::llama1bShape(), 132, 2048);
  for (const char *name : {"layer0.qkv", "layer0.o_proj", "layer0.gate_up", "layer0.down",
                           "lm_head"}) {
    auto tiles = tasksOf(graph, name);
    EXPECT_LE(tiles.size(), 132u) << name;
    EXPECT_GE(tiles.size(), 120u) << name;
    uint64_t smallest = UINT64_MAX, largest = 0;
    for (const Task *tile : tiles) {
      smallest = std::min(smallest, tile->weightBytes);
      largest = std::max(largest, tile->weightBytes);
    }
    EXPECT_LE(largest, smallest * 13 / 10) << name;
  }
}

// With a least tile size, a Gemv of few bytes takes fewer tiles than the
// SMs, each of at least that many bytes (where its segments allow), and a
// large one still one an SM; the rows stay covered once.
TEST_F(LowerToTasksTest, SmallGemvsTakeFewerTilesOfTheLeastSize) {
  auto module = test::parseModule(context, test::fusedModuleText(test::llama1bShape()));
  TargetDescription target;
  target.numSms = 132;
  target.leastGemvTileBytes = 1 << 20;
  auto lowered = lowerToTasks(*module, target, 2048);
  ASSERT_TRUE(bool(lowered)) << llvm::toString(lowered.takeError());
  const TaskGraph &graph = *lowered;
  // The 1B shape's weights in bf16, each norm vector counted once: qkv
  // 2048 x 3072 (12 MiB and a norm: 12 tiles of 1 MiB, but its 24 segments,
  // q, k and v of 8 KV groups, are each a tile at least), gate_up 2048 x
  // 16384 (64 MiB), down 8192 x 2048 (32 MiB), lm_head 2048 x 128256 (over
  // 132 MiB: one an SM).
  const std::pair<const char *, size_t> expectedTiles[] = {
      {"layer0.qkv", 24}, {"layer0.gate_up", 64}, {"layer0.down", 32}, {"lm_head", 132}};
  for (const auto &[name, expected] : expectedTiles) {
    auto tiles = tasksOf(graph, name);
    uint64_t rows = 0;
    for (const Task *tile : tiles)
      rows += tile->end - tile->begin;
    EXPECT_EQ(rows, graph.operations[tiles.front()->op].outputLength) << name;
    EXPECT_EQ(tiles.size(), expected) << name;
  }
  EXPECT_EQ(validateSchedule(graph, scheduleTasks(graph, target)), "");
}

TEST_F(LowerToTasksTest, ReadsAndWritesAreTheValidatorsFootprint) {
  for (const ModelShape &shape : {ModelShape(), qwen2Shape(), qwen3Shape(), mhaShape()}) {
    TaskGraph graph = lower(shape, 6);
    for (const Task &task : graph.tasks) {
      TaskFootprint derived = deriveFootprint(graph, task);
      EXPECT_EQ(normalizeRanges(task.reads).size(), normalizeRanges(derived.reads).size());
      for (const BufferRange &range : normalizeRanges(derived.reads))
        EXPECT_TRUE(rangesCover(normalizeRanges(task.reads), range)) << task.id;
      for (const BufferRange &range : normalizeRanges(derived.writes))
        EXPECT_TRUE(rangesCover(normalizeRanges(task.writes), range)) << task.id;
      for (const BufferRange &range : normalizeRanges(task.writes))
        EXPECT_TRUE(rangesCover(normalizeRanges(derived.writes), range)) << task.id;
    }
  }
}

TEST_F(LowerToTasksTest, WeightBytesAddUpToTheWeights) {
  ModelShape shape = qwen2Shape();
  TaskGraph graph = lower(shape, 8);
  for (uint32_t op = 0; op < graph.operations.size(); ++op) {
    const Operation &operation = graph.operations[op];
    if (operation.kind != OpKind::Gemv)
      continue;
    uint64_t elements = 0, tiles = 0, bytes = 0;
    for (const WeightRef &weight : operation.weights)
      elements += weight.rows * weight.cols;
    for (const WeightRef &bias : operation.biases)
      elements += bias.rows;
    for (const Task &task : graph.tasks)
      if (task.op == op) {
        ++tiles;
        bytes += task.weightBytes;
      }
    // Every tile streams the whole norm vector: it normalizes the input itself.
    if (!operation.norm.name.empty())
      elements += tiles * operation.norm.rows;
    EXPECT_EQ(bytes, 2 * elements) << operation.name;
  }
}

TEST(AttentionChunkSizeTest, OneLayersChunksFillTheSmsOnce) {
  struct Case {
    int64_t maxContext, kvHeads;
    uint32_t sms;
    int64_t chunkSize;
  };
  for (Case c : std::initializer_list<Case>{
           // The Llama-3.2-1B shape on the H200 with chunks of at most 256
           // positions: 132 / 8 KV heads -> 16 chunks per KV head, at most 64
           // chunks (the default's 2048: ALongerLongestChunkKeepsOneRoundOfTasks).
           {512, 8, 132, 32},
           {2048, 8, 132, 128},
           {8192, 8, 132, 256},
           {32768, 8, 132, 512},
           {131072, 8, 132, 2048},
           // Short contexts: one chunk of the shortest size.
           {1, 8, 132, 16},
           {40, 8, 132, 16},
           // The fixtures (2 KV heads): 66 chunks per KV head asked for, 64
           // allowed; 8 SMs as the lit tests run them.
           {2048, 2, 132, 32},
           {64, 2, 8, 16},
           {100, 2, 8, 32},
           // Fewer SMs than KV heads: still one chunk per KV head.
           {512, 5, 4, 256},
           {2048, 1, 1, 256},
       }) {
    int64_t size = attentionChunkSize(c.maxContext, c.kvHeads, c.sms, 256);
    EXPECT_EQ(size, c.chunkSize) << c.maxContext << " " << c.kvHeads << " " << c.sms;
  }
}

// A longer longest chunk: one round of chunk tasks over the SMs where the
// default needs several (the 1B shape at 32768: 16 chunks of 2048 per KV
// head, not 64 of 512), still within 64 chunks per KV head.
TEST(AttentionChunkSizeTest, ALongerLongestChunkKeepsOneRoundOfTasks) {
  EXPECT_EQ(attentionChunkSize(32768, 8, 132, 2048), 2048);
  EXPECT_EQ(attentionChunkSize(131072, 8, 132, 2048), 2048);
  EXPECT_EQ(attentionChunkSize(1 << 20, 8, 132, 2048), 16384); // the 64-chunk bound
  EXPECT_EQ(attentionChunkSize(4096, 8, 132, 2048), 256);      // within the default already
  EXPECT_EQ(attentionChunkSize(512, 8, 132, 2048), 32);
  EXPECT_EQ(attentionChunkSize(32768, 8, 132, 1), 512); // below the shortest: the shortest
  TargetDescription target;
  EXPECT_EQ(attentionChunkSize(65536, 8, target.numSms, target.longestAttentionChunk), 4096);
}

// Sizes are the context spread evenly, in whole grains of 16: a build a
// little past a round of longest chunks still takes one round (32800 on the
// 1B shape: 16 chunks of 2064, where powers of two gave 17 of 2048 and two
// rounds from position 32768 on), and past the longest chunk the chunks are
// as many as it needs, evened out (40000 at 2048: 20 of 2000).
TEST(AttentionChunkSizeTest, EvenSizesInWholeGrains) {
  EXPECT_EQ(attentionChunkSize(32800, 8, 132), 2064);
  EXPECT_EQ(attentionChunkSize(544, 8, 132), 48);
  EXPECT_EQ(attentionChunkSize(40000, 8, 132, 2048), 2000);
  EXPECT_EQ(attentionChunkSize(32800, 8, 132, 2048), 1936); // 17 chunks
  EXPECT_EQ(attentionChunkSize(32800, 8, 132, 1000), 976); // 34 chunks of at most 992
  // The longest for a group keeps its scores within 64 KiB.
  EXPECT_EQ(longestAttentionChunkFor(4, 4096), 4096);
  EXPECT_EQ(longestAttentionChunkFor(8, 4096), 2048);
  EXPECT_EQ(longestAttentionChunkFor(6, 4096), 2720);
  EXPECT_EQ(longestAttentionChunkFor(2048, 4096), 16);
  EXPECT_EQ(longestAttentionChunkFor(1, 1024), 1024);
}

TEST(AttentionChunkSizeTest, WholeGrainsWithinBoundsForAnyContext) {
  for (int64_t maxContext :
       {int64_t(1), int64_t(3), int64_t(1000), int64_t(32800), int64_t(40000), int64_t(1) << 20,
        int64_t(1) << 40, std::numeric_limits<int64_t>::max()})
    for (uint32_t sms : {1u, 132u, 100000u})
      for (int64_t longest : {int64_t(256), int64_t(2048), int64_t(4096)}) {
        int64_t size = attentionChunkSize(maxContext, 2, sms, longest);
        EXPECT_GE(size, 16) << maxContext;
        EXPECT_EQ(size % kAttentionSpanGrain, 0) << maxContext;
        int64_t chunks = maxContext / size + (maxContext % size != 0);
        EXPECT_LE(chunks, 64) << maxContext;
        bool pastMostChunks = maxContext / longest >= 64;
        EXPECT_TRUE(size <= longest || pastMostChunks) << maxContext << ": longer chunks than needed";
      }
}

// At every position of every compiled context, the chunks' spans cover the
// positions up to it exactly once, no chunk holds more than its compiled
// size, the span follows the position (a short position uses short spans
// even when compiled for a long context), and a step uses no more chunks
// than one round over the SMs runs at once while one round can hold it.
TEST(AttentionSpanTest, ChunksCoverThePositionAndFollowIt) {
  for (int64_t maxContext : {1, 8, 64, 100, 512, 544, 4096, 8192, 32768, 32800})
    for (int64_t kvHeads : {1, 2, 8})
      for (uint32_t sms : {8u, 132u}) {
        int64_t chunkSize = attentionChunkSize(maxContext, kvHeads, sms);
        int64_t numChunks = (maxContext + chunkSize - 1) / chunkSize;
        int64_t round = std::min(numChunks, attentionChunksPerRound(kvHeads, sms));
        for (int64_t p = 0; p < maxContext; p += (p < 300 ? 1 : 97)) {
          int64_t span = attentionSpan(p, round, numChunks, chunkSize);
          int64_t used = attentionChunksInUse(p, round, numChunks, chunkSize);
          ASSERT_GE(span, 1) << maxContext << " " << p;
          ASSERT_LE(span, chunkSize) << maxContext << " " << p;
          ASSERT_LE(used, numChunks) << maxContext << " " << p;
          ASSERT_LE((used - 1) * span, p) << maxContext << " " << p;
          ASSERT_GT(used * span, p) << maxContext << " " << p;
          bool oneRound = std::max<int64_t>((p + round) / round, kShortestSpan) <= chunkSize;
          if (oneRound)
            ASSERT_LE(used, round) << maxContext << " " << p << ": a second round";
          int64_t chunks = oneRound ? round : numChunks;
          int64_t even = (p + chunks) / chunks;
          ASSERT_LT(span, std::max<int64_t>(even, kShortestSpan) + kAttentionSpanGrain)
              << maxContext << " " << p << ": a span longer than the position needs";
        }
      }
  EXPECT_EQ(attentionSpan(100, 64, 64, 512), 32);
  EXPECT_EQ(attentionChunksInUse(100, 64, 64, 512), 4);
  EXPECT_EQ(attentionSpan(100, 64, 64, 16), 16); // never past the compiled chunk
  EXPECT_EQ(attentionSpan(8000, 64, 64, 512), 128);
  EXPECT_EQ(attentionSpan(32767, 64, 64, 512), 512);
}

// With a sliding window, at every position the chunks in use cover exactly
// the window's positions [max(0, p + 1 - window), p], each once and in
// order, no chunk holds more than its compiled size, and the chunks past
// those in use are empty: chunks cut for the window (attentionReach), not
// the context, whatever position the step has reached.
TEST(AttentionSpanTest, WindowChunksCoverTheWindowOnly) {
  for (int64_t maxContext : {64, 544, 4096, 32800})
    for (int64_t window : {1, 6, 31, 32, 33, 500, 4096})
      for (int64_t kvHeads : {1, 8})
        for (uint32_t sms : {8u, 132u}) {
          int64_t reach = attentionReach(maxContext, window);
          ASSERT_EQ(reach, std::min(maxContext, window));
          int64_t chunkSize = attentionChunkSize(reach, kvHeads, sms);
          int64_t numChunks = (reach + chunkSize - 1) / chunkSize;
          int64_t round = std::min(numChunks, attentionChunksPerRound(kvHeads, sms));
          for (int64_t p = 0; p < maxContext; p += (p < 300 ? 1 : 89)) {
            std::string where = std::to_string(maxContext) + " " + std::to_string(window) + " " +
                                std::to_string(p);
            int64_t start = std::max<int64_t>(0, p + 1 - window);
            ASSERT_EQ(attentionWindowStart(p, window), start) << where;
            int64_t used = attentionWindowChunksInUse(p, window, round, numChunks, chunkSize);
            ASSERT_GE(used, 1) << where;
            ASSERT_LE(used, numChunks) << where;
            int64_t next = start;
            for (int64_t c = 0; c < numChunks; ++c) {
              auto [first, last] =
                  attentionChunkPositions(p, window, c, round, numChunks, chunkSize);
              if (c >= used) {
                ASSERT_LE(last, first) << where << ": chunk " << c << " past those in use";
                continue;
              }
              ASSERT_EQ(first, next) << where << ": chunk " << c;
              ASSERT_GT(last, first) << where << ": chunk " << c << " in use but empty";
              ASSERT_LE(last - first, chunkSize) << where << ": chunk " << c;
              next = last;
            }
            ASSERT_EQ(next, p + 1) << where << ": the window's positions not all covered";
          }
        }
  // Without a window (0) the chunks are attentionSpan's.
  EXPECT_EQ(attentionWindowStart(100, 0), 0);
  EXPECT_EQ(attentionChunkPositions(100, 0, 1, 64, 64, 512).first, 32);
  EXPECT_EQ(attentionWindowChunksInUse(100, 0, 64, 64, 512), 4);
  // A window of 4096 at position 10000: [5905, 10000], 4096 positions.
  EXPECT_EQ(attentionChunkPositions(10000, 4096, 0, 16, 16, 256).first, 5905);
  EXPECT_EQ(attentionReach(32800, 0), 32800);
  EXPECT_EQ(attentionReach(32800, 40000), 32800);
}

// The 1B shape built for 32800 positions on 132 SMs: 16 chunks of 2064
// per KV head, one round at every position. With chunks of at most 1024
// positions: 33 chunks of 1008, 16 of them a round. At position 512 the
// step spreads over those 16: 11 chunks of 48, 88 tasks in one round, where
// spreading over all 33 took 17 chunks of 32, 136 tasks for 132 SMs. Past
// 16 x 1008 positions one round cannot hold a step, and the positions
// spread over all 33 chunks.
TEST(AttentionSpanTest, TheOneBShapeTakesOneRoundWhileOneRoundHoldsTheStep) {
  int64_t round = attentionChunksPerRound(8, 132);
  ASSERT_EQ(round, 16);
  ASSERT_EQ(attentionChunkSize(32800, 8, 132), 2064);
  EXPECT_EQ(attentionChunksInUse(32767, round, 16, 2064), 16);
  EXPECT_EQ(attentionSpan(32768, round, 16, 2064), 2064);
  EXPECT_EQ(attentionChunksInUse(32799, round, 16, 2064), 16);
  EXPECT_EQ(attentionSpan(512, round, 16, 2064), 48);

  int64_t chunkSize = attentionChunkSize(32800, 8, 132, 1024);
  ASSERT_EQ(chunkSize, 1008);
  EXPECT_EQ(attentionSpan(512, round, 33, chunkSize), 48);
  EXPECT_EQ(attentionChunksInUse(512, round, 33, chunkSize), 11);
  EXPECT_EQ(attentionChunksInUse(512, 33, 33, chunkSize), 17);
  EXPECT_EQ(attentionChunksInUse(4096, round, 33, chunkSize), 16);
  EXPECT_EQ(attentionSpan(16127, round, 33, chunkSize), 1008); // the last step one round holds
  EXPECT_EQ(attentionChunksInUse(16127, round, 33, chunkSize), 16);
  EXPECT_EQ(attentionSpan(16128, round, 33, chunkSize), 496);
  EXPECT_EQ(attentionSpan(32736, round, 33, chunkSize), 1008);
  EXPECT_EQ(attentionChunksInUse(32736, round, 33, chunkSize), 33);
  EXPECT_EQ(attentionChunksPerRound(8, 4), 1);
  EXPECT_EQ(attentionChunksPerRound(0, 132), 132);
}

TEST_F(LowerToTasksTest, AttentionHasChunksAndMergesOfEachHead) {
  // qwen3's shape has 2 KV heads: 8 SMs ask for 4 chunks per KV head.
  for (auto [maxContext, chunkSize] : {std::pair<int64_t, int64_t>{64, 16},
                                       {100, 32},
                                       {2048, 512},
                                       {8192, 2048},
                                       {8, 16}}) {
    EXPECT_EQ(attentionChunkSize(maxContext, 2, 8), chunkSize) << maxContext;
    TaskGraph graph = lower(qwen3Shape(), 8, maxContext);
    const Operation &attention = graph.operations[2];
    ASSERT_EQ(attention.kind, OpKind::Attention);
    EXPECT_EQ(attention.chunkSize, chunkSize);
    int64_t chunks = (maxContext + chunkSize - 1) / chunkSize;
    EXPECT_EQ(attention.numChunks, chunks);
    EXPECT_EQ(attention.chunksPerRound, std::min<int64_t>(chunks, 4));
    EXPECT_EQ(attention.qNorm.rows, 32u);
    EXPECT_EQ(graph.buffers[attention.keyCache].elements, uint64_t(maxContext) * 2 * 32);
    std::map<TaskKind, int> kinds;
    for (const Task *task : tasksOf(graph, "layer0.attention"))
      ++kinds[task->kind];
    EXPECT_EQ(kinds[TaskKind::AttentionChunk], 2 * chunks);
    // A merge a q head's dimensions, 64 at most (heads of 32: one a head).
    EXPECT_EQ(kinds[TaskKind::AttentionMerge], attention.numHeads);
  }
}

TEST_F(LowerToTasksTest, NaiveEventsJoinWholeOperations) {
  TaskGraph graph = lower(ModelShape(), 8);
  const Task &embed = graph.tasks.front();
  const Task &argmax = graph.tasks.back();
  ASSERT_EQ(embed.kind, TaskKind::Embed);
  ASSERT_EQ(argmax.kind, TaskKind::Argmax);
  ASSERT_EQ(embed.waits.size(), 1u);
  EXPECT_EQ(embed.waits[0].event, argmax.trigger);
  EXPECT_EQ(embed.waits[0].stepOffset, -1);
  for (const Event &event : graph.events) {
    uint32_t triggers = std::count_if(graph.tasks.begin(), graph.tasks.end(),
                                      [&](const Task &task) { return task.trigger == event.id; });
    EXPECT_EQ(event.triggerCount, triggers) << event.name;
  }
  auto qkv = tasksOf(graph, "layer0.qkv");
  EXPECT_EQ(graph.events[qkv[0]->trigger].triggerCount, qkv.size());
}

TEST_F(LowerToTasksTest, TheValidatorAcceptsTheLoweredGraph) {
  ModelShape mqa;
  mqa.kvHeads = 1;
  for (const ModelShape &shape : {ModelShape(), qwen2Shape(), qwen3Shape(), mhaShape(), mqa})
    for (uint32_t sms : {1u, 4u, 132u}) {
      TaskGraph graph = lower(shape, sms, 40);
      TargetDescription target;
      target.numSms = sms;
      EXPECT_EQ(validateSchedule(graph, scheduleTasks(graph, target)), "");
    }
}

TEST_F(LowerToTasksTest, UnfusedIrIsRefusedNamingTheOp) {
  auto module = test::parseModule(context, R"mlir(
    module {
      mk.weight @embed : tensor<16x8xf32>
      mk.weight @norm : tensor<8xf32>
      func.func @decode_step(%token: i64, %pos: index) -> (tensor<16xf32>, i64) {
        %x = mk.embedding @embed[%token] : tensor<8xf32>
        %n = mk.rms_norm %x weight @norm {eps = 1.0e-05 : f32} : tensor<8xf32>
        %l = mk.logits %n weight @embed : tensor<8xf32> -> tensor<16xf32>
        %t = mk.argmax %l : tensor<16xf32>
        return %l, %t : tensor<16xf32>, i64
      }
    })mlir");
  auto graph = lowerToTasks(*module, TargetDescription(), 16);
  ASSERT_FALSE(bool(graph));
  std::string message = llvm::toString(graph.takeError());
  EXPECT_NE(message.find("'mk.rms_norm'"), std::string::npos) << message;
  EXPECT_NE(message.find("fusion"), std::string::npos) << message;
}

TEST_F(LowerToTasksTest, NoDecodeStepIsRefused) {
  auto module = test::parseModule(context, "module {}");
  auto graph = lowerToTasks(*module, TargetDescription(), 16);
  ASSERT_FALSE(bool(graph));
  EXPECT_NE(llvm::toString(graph.takeError()).find("@decode_step"), std::string::npos);
}

TEST(RowTilingTest, EvenTilesWithinSegments) {
  EXPECT_EQ(tileRows(10, {}, 3), (std::vector<RowTile>{{0, 4}, {4, 7}, {7, 10}}));
  EXPECT_EQ(tileRows(10, {4}, 4), (std::vector<RowTile>{{0, 2}, {2, 4}, {4, 7}, {7, 10}}));
  // More segments than tiles allowed: one tile per segment.
  EXPECT_EQ(tileRows(6, {2, 4}, 2), (std::vector<RowTile>{{0, 2}, {2, 4}, {4, 6}}));
  EXPECT_EQ(tileRows(3, {0, 3, 7}, 8), (std::vector<RowTile>{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_TRUE(tileRows(0, {}, 4).empty());
}

TEST(RowTilingTest, TheLargestTileIsAsSmallAsTheCountAllows) {
  // 3072 qkv rows of the 1B shape, cut at 8 KV groups, on 132 SMs: 24 rows
  // would need 136 tiles, so 26 rows (128 tiles) is the best that fits.
  std::vector<uint64_t> cuts;
  for (uint64_t g = 1; g <= 8; ++g)
    cuts.insert(cuts.end(), {g * 256, 2048 + g * 64, 2560 + g * 64});
  auto tiles = tileRows(3072, cuts, 132);
  uint64_t largest = 0;
  for (auto [begin, end] : tiles)
    largest = std::max(largest, end - begin);
  EXPECT_EQ(tiles.size(), 128u);
  EXPECT_EQ(largest, 26u);
}

} // namespace
