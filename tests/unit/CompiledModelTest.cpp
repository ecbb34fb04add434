// The whole compiler on every fixture family: ONNX -> fusion -> tasks ->
// finer events -> schedule, run by the CPU executor (checked mode, so a
// task reading data not yet written fails; then threads with perturbed
// timing) against the reference interpreter on the imported IR. The
// attention is split into chunks merged in a fixed order, so the sums are
// reassociated: logits agree within |a - b| <= 1e-4 + 1e-3 |ref|.
#include "compiler/driver/Pipeline.h"
#include "compiler/interpreter/ReferenceInterpreter.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/Bf16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace {

// Crosses two chunk boundaries: 40 positions are 3 chunks of 16.
constexpr int64_t kMaxContext = 40;
const std::vector<int64_t> kTokens = {5, 17, 42, 3, 99, 1, 7, 200, 13, 11, 0, 64, 31, 128, 77,
                                      249, 2, 9, 33, 8};

class CompiledModelTest : public ::testing::TestWithParam<const char *> {};

std::string fixturePath(const char *name) { return std::string(MKC_FIXTURES_DIR) + "/" + name; }

// The fixture compiled for kMaxContext positions on 7 SMs.
llvm::Expected<mk::CompiledModel> compileFixture(mlir::MLIRContext &context, const char *name,
                                                 mk::BufferElement kvCache, bool fuseMlp = false) {
  mk::CompileOptions options;
  options.maxContext = kMaxContext;
  options.target.numSms = 7;
  options.target.kvCache = kvCache;
  options.target.fuseMlp = fuseMlp;
  return mk::compileToSchedule(context, fixturePath(name), options);
}

// The compiled model's logits step by step against the reference
// interpreter's, on the CPU executor in checked mode, one thread or threads
// with perturbed timing; returns them.
std::vector<std::vector<float>> runAgainstReference(const mk::CompiledModel &compiled,
                                                    mk::ImportedModel &imported, bool threaded,
                                                    uint64_t seed) {
  mk::CpuExecutorOptions executorOptions;
  executorOptions.checked = true;
  executorOptions.threaded = threaded;
  executorOptions.adversarialSeed = threaded ? seed : 0;
  mk::CpuExecutor executor(compiled.tasks, compiled.schedule, compiled.imported.weights,
                           executorOptions);
  auto reference =
      mk::ReferenceInterpreter::create(imported.module.get(), imported.weights, kMaxContext);
  EXPECT_TRUE(bool(reference)) << llvm::toString(reference.takeError());
  std::vector<std::vector<float>> all;
  for (size_t step = 0; step < kTokens.size() && reference; ++step) {
    std::vector<float> logits = executor.step(kTokens[step]);
    auto expected = (*reference)->step(kTokens[step]);
    EXPECT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
    if (!expected || logits.size() != expected->size()) {
      ADD_FAILURE() << "step " << step << ": no reference logits of the same size";
      break;
    }
    for (size_t i = 0; i < logits.size(); ++i)
      if (std::fabs(logits[i] - (*expected)[i]) > 1e-4 + 1e-3 * std::fabs((*expected)[i])) {
        ADD_FAILURE() << "step " << step << ", logit " << i << ": " << logits[i] << " against "
                      << (*expected)[i] << (threaded ? ", threaded" : "");
        break;
      }
    all.push_back(std::move(logits));
  }
  return all;
}

TEST_P(CompiledModelTest, TheScheduleComputesWhatTheIrMeans) {
  std::string path = fixturePath(GetParam());
  mlir::MLIRContext compileContext, referenceContext;
  auto compiled = compileFixture(compileContext, GetParam(), mk::BufferElement::F32);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto imported = mk::importOnnxModel(referenceContext, path);
  ASSERT_TRUE(bool(imported)) << llvm::toString(imported.takeError());
  for (bool threaded : {false, true})
    runAgainstReference(*compiled, *imported, threaded, 7);
}

// With bf16 KV caches (--kv-cache=bf16) the caches keep only bf16 values,
// the logits move by the rounding of k and v, no more: within a bound
// relative to the largest logit, and not bit for bit the f32 run's.
TEST_P(CompiledModelTest, Bf16CachesKeepRoundedValues) {
  mlir::MLIRContext f32Context, bf16Context;
  auto f32 = compileFixture(f32Context, GetParam(), mk::BufferElement::F32);
  ASSERT_TRUE(bool(f32)) << llvm::toString(f32.takeError());
  auto bf16 = compileFixture(bf16Context, GetParam(), mk::BufferElement::BF16);
  ASSERT_TRUE(bool(bf16)) << llvm::toString(bf16.takeError());

  mk::CpuExecutorOptions executorOptions;
  executorOptions.checked = true;
  executorOptions.threaded = false;
  mk::CpuExecutor reference(f32->tasks, f32->schedule, f32->imported.weights, executorOptions);
  mk::CpuExecutor rounded(bf16->tasks, bf16->schedule, bf16->imported.weights, executorOptions);
  double largest = 0.0, worst = 0.0;
  bool differs = false;
  for (size_t step = 0; step < kTokens.size(); ++step) {
    std::vector<float> expected = reference.step(kTokens[step]);
    std::vector<float> logits = rounded.step(kTokens[step]);
    ASSERT_EQ(logits.size(), expected.size());
    for (size_t i = 0; i < logits.size(); ++i) {
      largest = std::max(largest, std::fabs(double(expected[i])));
      worst = std::max(worst, std::fabs(double(logits[i]) - double(expected[i])));
      differs |= logits[i] != expected[i];
    }
  }
  EXPECT_TRUE(differs) << "the bf16 caches changed nothing: were they rounded?";
  EXPECT_LE(worst, 1e-2 * largest) << "largest logit " << largest;
  int caches = 0;
  for (uint32_t buffer = 0; buffer < bf16->tasks.buffers.size(); ++buffer) {
    if (bf16->tasks.buffers[buffer].kind != mk::BufferKind::KVCache)
      continue;
    ++caches;
    EXPECT_EQ(bf16->tasks.buffers[buffer].element, mk::BufferElement::BF16);
    for (float value : rounded.bufferValues(buffer))
      ASSERT_EQ(value, mk::roundToBf16(value)) << bf16->tasks.buffers[buffer].name;
  }
  EXPECT_GT(caches, 0);
}

// With --fuse-mlp each layer's gated MLP is one Mlp operation whose slices
// add into a fixed64 output: the logits still agree with the reference
// interpreter, and are the same bits whatever order the threads' additions
// land in.
TEST_P(CompiledModelTest, FusedMlpsComputeWhatTheIrMeans) {
  std::string path = fixturePath(GetParam());
  mlir::MLIRContext compileContext, referenceContext;
  auto compiled = compileFixture(compileContext, GetParam(), mk::BufferElement::F32, true);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  int mlps = 0;
  for (const mk::Operation &op : compiled->tasks.operations)
    mlps += op.kind == mk::OpKind::Mlp;
  ASSERT_GT(mlps, 0) << "no gated MLP was fused";
  auto imported = mk::importOnnxModel(referenceContext, path);
  ASSERT_TRUE(bool(imported)) << llvm::toString(imported.takeError());
  std::vector<std::vector<float>> alone = runAgainstReference(*compiled, *imported, false, 0);
  std::vector<std::vector<float>> threaded = runAgainstReference(*compiled, *imported, true, 11);
  EXPECT_EQ(alone.size(), kTokens.size());
  EXPECT_EQ(threaded, alone) << "not the same bits threaded";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CompiledModelTest,
                         ::testing::Values("llama3_ts17.onnx", "qwen2_dynamo18.onnx",
                                           "qwen3_dynamo23.onnx", "mistral_ts17.onnx",
                                           "llama3_fp16_ts17.onnx"));

} // namespace
