// chunkDependencies: the finer events make each consumer wait only on the
// producer tiles that write what it reads (a chunk on its KV group's q/k/v
// tiles, a merge on its chunks), still
// name every producer of every read, and never lengthen the critical path.
#include "FusedModuleText.h"

#include "compiler/schedule/Scheduler.h"
#include "compiler/taskgraph/ChunkDependencies.h"
#include "compiler/taskgraph/LowerToTasks.h"
#include "compiler/taskgraph/TaskGraphAnalysis.h"
#include "core/validator/Validator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace mk;
using test::ModelShape;

class ChunkDependenciesTest : public ::testing::Test {
protected:
  TaskGraph lower(const ModelShape &shape, uint32_t numSms = 8, int64_t maxContext = 64) {
    auto module = test::parseModule(context, test::fusedModuleText(shape));
    target.numSms = numSms;
    // Merge tasks: a graph by head leaves out waits that others imply
    // (FixtureDependencyTest checks those).
    target.oProjByHead = TargetDescription::ByHead::Off;
    auto graph = lowerToTasks(*module, target, maxContext);
    EXPECT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
    return graph ? std::move(*graph) : TaskGraph();
  }

  // The tasks that trigger the events `task` waits on in the same step.
  std::set<uint32_t> waitedTasks(const TaskGraph &graph, const Task &task) {
    auto predecessors = sameStepPredecessors(graph);
    return {predecessors[task.id].begin(), predecessors[task.id].end()};
  }

  mlir::MLIRContext context;
  TargetDescription target;
};

ModelShape gqaShape() {
  ModelShape shape;
  shape.hidden = 128;
  shape.heads = 8;
  shape.kvHeads = 4;
  return shape;
}

TEST_F(ChunkDependenciesTest, TheReportImprovesAndTheFinerEventsAreKept) {
  TaskGraph graph = lower(gqaShape());
  DependencyStats before = dependencyStats(graph);
  DependencyReport report = chunkDependencies(graph);
  EXPECT_EQ(report.naive.events, before.events);
  EXPECT_TRUE(report.keptChunked);
  EXPECT_GT(report.chunked.events, report.naive.events);
  EXPECT_LT(report.chunked.waitedTasks, report.naive.waitedTasks);
  EXPECT_LE(report.chunked.criticalPathTasks, report.naive.criticalPathTasks);
  EXPECT_LE(report.chunked.criticalPathBytes, report.naive.criticalPathBytes);
  EXPECT_EQ(dependencyStats(graph).events, report.chunked.events);
}

TEST_F(ChunkDependenciesTest, EveryConsumerWaitsOnEveryProducerOfItsReads) {
  for (uint32_t sms : {1u, 5u, 8u, 132u}) {
    TaskGraph graph = lower(gqaShape(), sms);
    chunkDependencies(graph);
    auto producers = producersOfReads(graph);
    size_t checked = 0;
    for (const Task &task : graph.tasks)
      for (const Producer &producer : producers[task.id]) {
        ++checked;
        uint32_t event = graph.tasks[producer.task].trigger;
        bool waited = std::any_of(task.waits.begin(), task.waits.end(), [&](const Wait &wait) {
          return wait.event == event && wait.stepOffset == producer.stepOffset;
        });
        EXPECT_TRUE(waited) << "task " << task.id << " does not wait on producer "
                            << producer.task << " on " << sms << " SMs";
      }
    EXPECT_GT(checked, 0u) << "no task reads anything on " << sms << " SMs";
  }
}

TEST_F(ChunkDependenciesTest, AttentionWaitsOnlyOnItsOwnKvGroup) {
  ModelShape shape = gqaShape();
  TaskGraph graph = lower(shape, 32);
  chunkDependencies(graph);
  uint64_t d = shape.headDim, groupRows = d * shape.heads / shape.kvHeads;
  uint64_t kStart = shape.heads * d, vStart = kStart + shape.kvHeads * d;
  // Every phase must be found, and each task's producers with it: a renamed
  // operation or kind must fail here, not check nothing.
  std::map<TaskKind, size_t> attentionTasks;
  for (const Task &task : graph.tasks) {
    if (graph.operations[task.op].name != "layer0.attention")
      continue;
    ++attentionTasks[task.kind];
    // A chunk's KV head is its begin; a merge's, that of the q heads of its
    // output elements.
    uint64_t g = task.kind == TaskKind::AttentionMerge ? task.begin / groupRows : task.begin;
    std::set<uint32_t> expected;
    for (const Task &other : graph.tasks) {
      const std::string &op = graph.operations[other.op].name;
      bool sameGroup = other.begin == g;
      switch (task.kind) {
      case TaskKind::AttentionChunk: {
        // The qkv tiles holding group g's q, k or v rows.
        auto overlaps = [&](uint64_t begin, uint64_t end) {
          return other.begin < end && begin < other.end;
        };
        if (op == "layer0.qkv" &&
            (overlaps(g * groupRows, (g + 1) * groupRows) ||
             overlaps(kStart + g * d, kStart + (g + 1) * d) ||
             overlaps(vStart + g * d, vStart + (g + 1) * d)))
          expected.insert(other.id);
        break;
      }
      case TaskKind::AttentionMerge:
        if (other.kind == TaskKind::AttentionChunk && op == "layer0.attention" && sameGroup)
          expected.insert(other.id);
        break;
      default:
        break;
      }
    }
    EXPECT_FALSE(expected.empty()) << "no producer found for attention task " << task.id;
    EXPECT_EQ(waitedTasks(graph, task), expected) << "task " << task.id;
  }
  for (TaskKind kind : {TaskKind::AttentionChunk, TaskKind::AttentionMerge})
    EXPECT_GT(attentionTasks[kind], 0u)
        << "no layer0.attention task of kind " << static_cast<int>(kind);
}

TEST_F(ChunkDependenciesTest, AResidualTileWaitsOnItsResidualRowsAndTheWholeInput) {
  TaskGraph graph = lower(gqaShape(), 8);
  chunkDependencies(graph);
  size_t downTiles = 0;
  for (const Task &task : graph.tasks) {
    if (graph.operations[task.op].name != "layer0.down")
      continue;
    ++downTiles;
    std::set<uint32_t> waited = waitedTasks(graph, task);
    size_t inputTiles = 0, residualTiles = 0;
    for (const Task &other : graph.tasks) {
      const std::string &op = graph.operations[other.op].name;
      if (op == "layer0.gate_up") {
        ++inputTiles;
        EXPECT_TRUE(waited.count(other.id)) << "input tile " << other.id;
      }
      if (op == "layer0.o_proj" && other.begin < task.end && task.begin < other.end) {
        ++residualTiles;
        EXPECT_TRUE(waited.count(other.id)) << "residual tile " << other.id;
      }
    }
    EXPECT_GT(inputTiles, 0u) << "no layer0.gate_up tile for down tile " << task.id;
    EXPECT_GT(residualTiles, 0u) << "no layer0.o_proj tile under down tile " << task.id;
  }
  EXPECT_GT(downTiles, 0u) << "no layer0.down tile";
}

TEST_F(ChunkDependenciesTest, TheFinerGraphPassesTheValidator) {
  ModelShape qwen3;
  qwen3.headDim = 32;
  qwen3.qkNorm = true;
  ModelShape mqa;
  mqa.kvHeads = 1;
  for (const ModelShape &shape : {gqaShape(), qwen3, mqa})
    for (uint32_t sms : {1u, 7u, 132u}) {
      TaskGraph graph = lower(shape, sms);
      chunkDependencies(graph);
      EXPECT_EQ(validateSchedule(graph, scheduleTasks(graph, target)), "");
    }
}

TEST_F(ChunkDependenciesTest, RunningItTwiceChangesNothing) {
  TaskGraph graph = lower(gqaShape());
  chunkDependencies(graph);
  TaskGraph once = graph;
  DependencyReport again = chunkDependencies(graph);
  EXPECT_FALSE(again.keptChunked);
  ASSERT_EQ(graph.events.size(), once.events.size());
  for (size_t i = 0; i < graph.tasks.size(); ++i) {
    EXPECT_EQ(graph.tasks[i].trigger, once.tasks[i].trigger);
    EXPECT_EQ(graph.tasks[i].waits.size(), once.tasks[i].waits.size());
  }
}

} // namespace
