// Every wait of a real compiled model, removed one at a time: the validator
// refuses the schedule, or the wait was implied by others (the reader already
// waits, through some chain, for every writer of what it reads) and the
// checked executor, run with adversarial SM orders, computes exactly the bits
// of the intact schedule. A missing dependency can never pass silently.
#include "compiler/driver/Pipeline.h"
#include "core/validator/Validator.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

const std::vector<int64_t> kTokens = {5, 17, 42, 3, 99, 1};

std::vector<float> runChecked(const mk::CompiledModel &model, const mk::TaskGraph &graph,
                              uint64_t seed) {
  mk::CpuExecutorOptions options;
  options.threaded = false;
  options.checked = true;
  options.adversarialSeed = seed;
  options.validateDataflow = false;
  mk::CpuExecutor executor(graph, model.schedule, model.imported.weights, options);
  std::vector<float> all;
  for (int64_t token : kTokens) {
    std::vector<float> logits = executor.step(token);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

class FixtureDependencyTest : public ::testing::TestWithParam<const char *> {};

TEST_P(FixtureDependencyTest, EveryRemovedWaitIsRefusedOrImplied) {
  mlir::MLIRContext context;
  mk::CompileOptions options;
  options.maxContext = 24;
  options.target.numSms = 5;
  auto compiled =
      mk::compileToSchedule(context, std::string(MKC_FIXTURES_DIR) + "/" + GetParam(), options);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  std::vector<float> intact = runChecked(*compiled, compiled->tasks, 0);

  size_t waits = 0, refused = 0;
  for (const mk::Task &task : compiled->tasks.tasks) {
    for (size_t wait = 0; wait < task.waits.size(); ++wait, ++waits) {
      mk::TaskGraph graph = compiled->tasks;
      auto &taskWaits = graph.tasks[task.id].waits;
      taskWaits.erase(taskWaits.begin() + wait);
      if (!mk::validateSchedule(graph, compiled->schedule).empty()) {
        ++refused;
        continue;
      }
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        std::vector<float> logits;
        try {
          logits = runChecked(*compiled, graph, seed);
        } catch (const mk::ExecutionError &error) {
          ADD_FAILURE() << "the validator accepted a schedule without wait " << wait
                        << " of task " << task.id << ", and it races: " << error.what();
          continue;
        }
        ASSERT_EQ(logits.size(), intact.size());
        EXPECT_EQ(std::memcmp(logits.data(), intact.data(), logits.size() * sizeof(float)), 0)
            << "without wait " << wait << " of task " << task.id << ": different logits";
      }
    }
  }
  EXPECT_GT(refused, 0u);
  std::printf("%s: %zu waits, %zu refused by the validator, %zu implied by others\n",
              GetParam(), waits, refused, waits - refused);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureDependencyTest,
                         ::testing::Values("llama3_ts17.onnx", "qwen3_dynamo23.onnx"));

} // namespace
