// Every dependency edge of the toy graph, removed one at a time: the
// validator refuses the graph, and the checked executor, made to run it
// anyway, either reports the race naming a task or — when this timing
// happened to respect the missing edge — gives exactly the bits of the
// intact graph. Never garbage. On 4 SMs an edge can be covered by the queue
// order (a task behind one that waits for the same producers); with one task
// per SM nothing covers it, so some run must expose every race.
#include "ToyTaskGraph.h"

#include "core/validator/Validator.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mk {
namespace {

const std::vector<int64_t> kPrompt = {3, 17, 5};
constexpr int64_t kNewTokens = 4;

struct Outcome {
  std::vector<int64_t> tokens;
  std::vector<float> logits;
  std::string error;
};

Outcome run(const toy::ToyModel &model, CpuExecutorOptions options) {
  Outcome outcome;
  try {
    CpuExecutor executor(model.graph, model.schedule, model.weights, options);
    outcome.tokens = executor.generate(kPrompt, kNewTokens);
    outcome.logits.assign(executor.logits().begin(), executor.logits().end());
  } catch (const ExecutionError &error) {
    outcome.error = error.what();
  }
  return outcome;
}

void expectCaughtOrExact(const Outcome &outcome, const Outcome &intact, const std::string &what) {
  if (!outcome.error.empty()) {
    EXPECT_NE(outcome.error.find("task "), std::string::npos) << what << ": " << outcome.error;
    return;
  }
  EXPECT_EQ(outcome.tokens, intact.tokens) << what;
  ASSERT_EQ(outcome.logits.size(), intact.logits.size()) << what;
  EXPECT_EQ(std::memcmp(outcome.logits.data(), intact.logits.data(),
                        outcome.logits.size() * sizeof(float)),
            0)
      << what << ": silently different logits";
}

TEST(MissingDependency, EveryRemovedEdgeIsRefusedOrCaught) {
  const toy::ToyModel intactModel = toy::buildToyModel(4);
  Outcome intact = run(intactModel, {.threaded = false});
  ASSERT_EQ(intact.error, "");

  size_t edges = 0, caughtEdges = 0;
  for (const Task &task : intactModel.graph.tasks)
    for (size_t wait = 0; wait < task.waits.size(); ++wait, ++edges) {
      bool caught = false;
      for (uint32_t sms : {4u, 64u}) {
        toy::ToyModel model = toy::buildToyModel(sms);
        model.graph.tasks[task.id].waits.erase(model.graph.tasks[task.id].waits.begin() + wait);
        std::string what = "without wait " + std::to_string(wait) + " of task " +
                           std::to_string(task.id) + ", " + std::to_string(sms) + " SMs";

        EXPECT_NE(validateSchedule(model.graph, model.schedule), "") << what;

        for (uint64_t seed = 1; seed <= 12; ++seed) {
          Outcome outcome = run(model, {.threaded = false, .adversarialSeed = seed,
                                        .checked = true, .validateDataflow = false});
          expectCaughtOrExact(outcome, intact, what + ", single thread, seed " + std::to_string(seed));
          caught = caught || !outcome.error.empty();
        }
        for (uint64_t seed = 1; seed <= 2; ++seed) {
          Outcome outcome = run(model, {.threaded = true, .adversarialSeed = seed,
                                        .checked = true, .validateDataflow = false});
          expectCaughtOrExact(outcome, intact, what + ", threaded, seed " + std::to_string(seed));
          caught = caught || !outcome.error.empty();
        }
      }
      EXPECT_TRUE(caught) << "without wait " << wait << " of task " << task.id
                          << ": no run exposed the race";
      caughtEdges += caught;
    }
  EXPECT_EQ(edges, intactModel.graph.tasks.size()) << "one wait per task in the toy graph";
  EXPECT_EQ(caughtEdges, edges);
}

TEST(MissingDependency, TheReportNamesTheTaskAndTheExecutorStops) {
  toy::ToyModel model = toy::buildToyModel(4);
  // The merge of KV head 1: q heads 2 and 3, output elements [16, 32).
  uint32_t reader = toy::findTask(model.graph, TaskKind::AttentionMerge, "layer1.attention", 16);
  model.graph.tasks[reader].waits.clear();
  // First on SM 0, so that round-robin reaches it before its chunks.
  for (auto &queue : model.schedule.queues)
    std::erase(queue, reader);
  model.schedule.queues[0].insert(model.schedule.queues[0].begin(), reader);
  CpuExecutor executor(model.graph, model.schedule, model.weights,
                       {.threaded = false, .checked = true, .validateDataflow = false});
  try {
    executor.step(3);
    ADD_FAILURE() << "the merge ran before its chunks unnoticed";
  } catch (const ExecutionError &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("task " + std::to_string(reader) +
                           " (AttentionMerge 'layer1.attention', output [16, 32))"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("buffer 'layer1.partials'"), std::string::npos) << message;
    EXPECT_NE(message.find("dependency is missing"), std::string::npos) << message;
  }
  EXPECT_THROW(executor.step(3), ExecutionError);
}

} // namespace
} // namespace mk
