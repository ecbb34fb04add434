// scheduleTasks: every task in exactly one queue, in-order execution per SM
// never deadlocks (simulated over several steps, with and without jitter),
// the result is deterministic, and each layer's weight bytes are balanced
// over the SMs. The simulation itself must catch a deadlocking schedule.
#include "FusedModuleText.h"

#include "compiler/schedule/ScheduleBalance.h"
#include "compiler/schedule/ScheduleSimulation.h"
#include "compiler/schedule/Scheduler.h"
#include "compiler/taskgraph/ChunkDependencies.h"
#include "compiler/taskgraph/LowerToTasks.h"
#include "core/protocol/AttentionLayout.h"

#include <gtest/gtest.h>

namespace {

using namespace mk;
using test::ModelShape;

class SchedulerTest : public ::testing::Test {
protected:
  TaskGraph lower(const ModelShape &shape, uint32_t numSms, int64_t maxContext = 64,
                  bool chunked = true) {
    auto module = test::parseModule(context, test::fusedModuleText(shape));
    target.numSms = numSms;
    auto graph = lowerToTasks(*module, target, maxContext);
    EXPECT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
    if (!graph)
      return TaskGraph();
    if (chunked)
      chunkDependencies(*graph);
    return std::move(*graph);
  }

  mlir::MLIRContext context;
  TargetDescription target;
};

TEST_F(SchedulerTest, InOrderExecutionPerSmNeverDeadlocks) {
  ModelShape wide;
  wide.heads = 8;
  wide.kvHeads = 2;
  wide.hidden = 128;
  for (const ModelShape &shape : {ModelShape(), wide})
    for (uint32_t sms : {1u, 2u, 3u, 8u, 33u, 132u})
      for (bool chunked : {false, true}) {
        TaskGraph graph = lower(shape, sms, 64, chunked);
        Schedule schedule = scheduleTasks(graph, target);
        EXPECT_EQ(schedule.numSms, sms);
        EXPECT_EQ(schedule.queues.size(), sms);
        for (double jitter : {0.0, 0.5}) {
          SimulationResult result = simulateSchedule(graph, schedule, target, {3, jitter});
          EXPECT_TRUE(result.completed) << sms << " SMs: " << result.problem;
        }
      }
}

TEST_F(SchedulerTest, ItIsDeterministic) {
  TaskGraph graph = lower(ModelShape(), 16);
  Schedule first = scheduleTasks(graph, target), second = scheduleTasks(graph, target);
  EXPECT_EQ(first.queues, second.queues);
}

TEST_F(SchedulerTest, EachLayerIsBalancedOverTheSmsOfA1bModel) {
  TaskGraph graph = lower(test::llama1bShape(), 132, 2048);
  Schedule schedule = scheduleTasks(graph, target);
  for (const LayerBalance &layer : layerBalance(graph, schedule)) {
    EXPECT_LE(layer.bytes.max, layer.bytes.mean * 1.1) << "layer " << layer.layer;
    EXPECT_GT(layer.bytes.total, 0u);
  }
  BytesPerSm step = stepBalance(graph, schedule);
  EXPECT_LE(step.max, step.mean * 1.05);
  SimulationResult result = simulateSchedule(graph, schedule, target);
  ASSERT_TRUE(result.completed) << result.problem;
  // Streaming every weight once at the full bandwidth is the floor.
  EXPECT_GT(result.secondsPerStep, double(step.total) / target.memoryBandwidth);
}

// The cost model prices every attention chunk at the compiled context, but
// at a step's position only the chunks below it have work: placed by chunk
// index, those with work spread over the SMs, one each while they fit one
// round. The 1B shape built for 32800 positions has 8 KV heads of 33
// chunks, two rounds over 132 SMs; placed head by head, chunk c of heads h
// and h + 4 shared an SM, and at position 1 two chunks with work ran there
// one behind the other (bench/NOTES.md).
TEST_F(SchedulerTest, TheChunksWithWorkAtAPositionSpreadOverTheSms) {
  ModelShape shape = test::llama1bShape();
  shape.layers = 2;
  TaskGraph graph = lower(shape, 132, 32800);
  Schedule schedule = scheduleTasks(graph, target);
  for (int64_t position : {0, 1, 100, 400, 512, 1000, 4000, 32000, 32768, 32799})
    for (uint32_t opIndex = 0; opIndex < graph.operations.size(); ++opIndex) {
      const Operation &op = graph.operations[opIndex];
      if (op.kind != OpKind::Attention)
        continue;
      ASSERT_EQ(op.numChunks, 16) << "the shape this test describes (chunks of 2064)";
      ASSERT_EQ(op.chunksPerRound, 16) << "132 SMs over 8 KV heads";
      int64_t inUse = attentionChunksInUse(position, op.chunksPerRound, op.numChunks, op.chunkSize);
      uint64_t busy = static_cast<uint64_t>(inUse * op.numKvHeads);
      uint64_t most = 0;
      for (const std::vector<uint32_t> &queue : schedule.queues) {
        uint64_t here = 0;
        for (uint32_t id : queue) {
          const Task &task = graph.tasks[id];
          here += task.kind == TaskKind::AttentionChunk && task.op == opIndex &&
                  static_cast<int64_t>(task.end) < inUse;
        }
        most = std::max(most, here);
      }
      EXPECT_EQ(most, (busy + schedule.numSms - 1) / schedule.numSms)
          << op.name << " at position " << position << ": " << busy << " chunks with work";
    }
}

TEST_F(SchedulerTest, TheSimulationCatchesAConsumerQueuedBeforeItsProducer) {
  TaskGraph graph = lower(ModelShape(), 2);
  Schedule schedule;
  schedule.numSms = 1;
  schedule.queues.assign(1, {});
  for (uint32_t task = graph.tasks.size(); task-- > 0;)
    schedule.queues[0].push_back(task);
  SimulationResult result = simulateSchedule(graph, schedule, target);
  EXPECT_FALSE(result.completed);
  EXPECT_NE(result.problem.find("waits on event"), std::string::npos) << result.problem;
}

TEST_F(SchedulerTest, TheSimulationCatchesAMissingTask) {
  TaskGraph graph = lower(ModelShape(), 2);
  Schedule schedule = scheduleTasks(graph, target);
  schedule.queues[0].pop_back();
  SimulationResult result = simulateSchedule(graph, schedule, target);
  EXPECT_FALSE(result.completed);
  EXPECT_NE(result.problem.find("in no queue"), std::string::npos) << result.problem;
}

} // namespace
