// The whole compiler on every fixture family: ONNX -> fusion -> tasks ->
// finer events -> schedule, run by the CPU executor (checked mode, so a
// task reading data not yet written fails; then threads with perturbed
// timing) against the reference interpreter on the imported IR. The
// attention is split into chunks merged in a fixed order, so the sums are
// reassociated: logits agree within |a - b| <= 1e-4 + 1e-3 |ref|.
#include "compiler/driver/Pipeline.h"
#include "compiler/interpreter/ReferenceInterpreter.h"
#include "runtime/cpu/CpuExecutor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

// Crosses two chunk boundaries: 40 positions are 3 chunks of 16.
constexpr int64_t kMaxContext = 40;
const std::vector<int64_t> kTokens = {5, 17, 42, 3, 99, 1, 7, 200, 13, 11, 0, 64, 31, 128, 77,
                                      249, 2, 9, 33, 8};

class CompiledModelTest : public ::testing::TestWithParam<const char *> {};

TEST_P(CompiledModelTest, TheScheduleComputesWhatTheIrMeans) {
  std::string path = std::string(MKC_FIXTURES_DIR) + "/" + GetParam();
  mlir::MLIRContext compileContext, referenceContext;
  mk::CompileOptions options;
  options.maxContext = kMaxContext;
  options.target.numSms = 7;
  auto compiled = mk::compileToSchedule(compileContext, path, options);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto imported = mk::importOnnxModel(referenceContext, path);
  ASSERT_TRUE(bool(imported)) << llvm::toString(imported.takeError());

  for (bool threaded : {false, true}) {
    mk::CpuExecutorOptions executorOptions;
    executorOptions.checked = true;
    executorOptions.threaded = threaded;
    executorOptions.adversarialSeed = threaded ? 7 : 0;
    mk::CpuExecutor executor(compiled->tasks, compiled->schedule, compiled->imported.weights,
                             executorOptions);
    auto reference = mk::ReferenceInterpreter::create(imported->module.get(), imported->weights,
                                                      kMaxContext);
    ASSERT_TRUE(bool(reference)) << llvm::toString(reference.takeError());
    for (size_t step = 0; step < kTokens.size(); ++step) {
      std::vector<float> logits = executor.step(kTokens[step]);
      auto expected = (*reference)->step(kTokens[step]);
      ASSERT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
      ASSERT_EQ(logits.size(), expected->size());
      for (size_t i = 0; i < logits.size(); ++i)
        ASSERT_LE(std::fabs(logits[i] - (*expected)[i]), 1e-4 + 1e-3 * std::fabs((*expected)[i]))
            << "step " << step << ", logit " << i << (threaded ? ", threaded" : "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CompiledModelTest,
                         ::testing::Values("llama3_ts17.onnx", "qwen2_dynamo18.onnx",
                                           "qwen3_dynamo23.onnx", "mistral_ts17.onnx",
                                           "llama3_fp16_ts17.onnx"));

} // namespace
