// A batch on the GPU (a kernel of several rows a step, row r sequence r)
// against the same sequences run one at a time:
//
//   mk-gpu-batch-check (MODEL.onnx | SHAPE.mlir) [--batch=B] [--max-context=N] [--kv-cache=bf16]
//
// The model is compiled with a batch of B (default 4), as `mkc compile
// --batch=B --emit=mk` would (the decode kernel, the batch's kernel in
// ROWKERNELS), and each check prints one line:
//   - teacher forcing B prompts of different lengths at once: each row's
//     logits at each of its positions within kTolerance of the CPU
//     executor's for that sequence alone (relative to the largest logit),
//     and of the decode kernel's on the GPU, the argmax equal wherever the
//     CPU's top-2 gap is clear; rows past a shorter prompt idle;
//   - two launches give the same bits;
//   - greedy generation of every sequence at once: each row's tokens are
//     what the decode kernel, teacher-forced on that sequence, picks where
//     its top-2 gap is clear;
//   - fewer sequences than rows: the idle rows change nothing;
//   - an EOS token ends its own sequence only: the other rows go on with
//     the same tokens.
// Exit 0 when all pass, 1 when one fails, 77 (ctest's skip) with the reason
// only when the GPU is unavailable.
#include "GpuTestModels.h"

#include "codegen/Megakernel.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/RandomWeights.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/RowKernels.h"
#include "runtime/format/WeightPacking.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace mk {
namespace {

constexpr double kTolerance = 2e-3; // of the largest |logit|, as mk-gpu-check
constexpr float kClearGap = 1e-2f;  // top-2 gaps below this may flip either way

int failures = 0;

void report(bool passed, const std::string &what) {
  std::printf("  %s  %s\n", passed ? "ok  " : "FAIL", what.c_str());
  failures += passed ? 0 : 1;
}

std::vector<int64_t> someTokens(int64_t count, int64_t vocab, uint64_t seed) {
  std::vector<int64_t> tokens;
  uint64_t state = seed;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    tokens.push_back(static_cast<int64_t>((state >> 33) % vocab));
  }
  return tokens;
}

struct Row {
  size_t argmax;
  float gap; // between the two largest
};

Row rowFacts(const float *logits, int64_t vocab) {
  size_t best = std::max_element(logits, logits + vocab) - logits;
  float second = -INFINITY;
  for (int64_t i = 0; i < vocab; ++i)
    if (static_cast<size_t>(i) != best)
      second = std::max(second, logits[i]);
  return {best, logits[best] - second};
}

// The decode graph and the batch's, scheduled, with the model's weights.
struct BatchModel {
  Model decode;
  ScheduledGraph batch;
};

std::optional<BatchModel> loadBatchModel(const std::string &path, int64_t maxContext,
                                         int64_t rows, const TargetDescription &target) {
  mlir::MLIRContext context;
  CompileOptions options;
  options.maxContext = maxContext;
  options.target = target;
  options.batchSizes = {rows};
  auto compiled = compileToSchedule(context, path, options);
  if (!compiled) {
    std::printf("cannot compile %s: %s\n", path.c_str(),
                llvm::toString(compiled.takeError()).c_str());
    return std::nullopt;
  }
  bool shapeOnly = compiled->imported.weights.all().empty();
  WeightTable weights =
      shapeOnly ? randomWeights(compiled->tasks) : std::move(compiled->imported.weights);
  return BatchModel{{std::move(compiled->tasks), std::move(compiled->schedule), std::move(weights)},
                    std::move(compiled->rowSteps.front())};
}

// The artifact with both kernels, as mkc writes it.
std::unique_ptr<BuiltArtifact> compileBatch(const BatchModel &model, std::vector<int64_t> eos) {
  auto decode = compileMegakernel(model.decode.graph, model.decode.schedule);
  auto batch = compileMegakernel(model.batch.graph, model.batch.schedule);
  if (!decode || !batch) {
    std::printf("NVRTC failed: %s\n",
                llvm::toString(decode ? batch.takeError() : decode.takeError()).c_str());
    return nullptr;
  }
  std::printf("  batch kernel: %d registers, %d bytes shared, %d bytes spilled\n",
              batch->registers, batch->sharedBytes, batch->spillBytes);
  ArtifactOptions options;
  options.eosTokens = std::move(eos);
  options.cubin = std::move(decode->cubin);
  options.ptx = std::move(decode->ptx);
  options.rowSteps = {model.batch};
  options.rowKernels = {std::move(batch->cubin)};
  std::string error;
  auto built = buildArtifact(model.decode.graph, model.decode.schedule, model.decode.weights,
                             std::move(options), error);
  if (!built)
    std::printf("cannot build the artifact: %s\n", error.c_str());
  return built;
}

// The batch step's device, loaded; nullptr (printed) when it fails.
std::unique_ptr<GpuDevice> loadBatchDevice(const Artifact &artifact,
                                           std::unique_ptr<Artifact> &view) {
  std::string error;
  view = rowStepArtifact(artifact, 0, error);
  std::unique_ptr<GpuDevice> device = view ? GpuDevice::open(error) : nullptr;
  if (!device || device->load(*view, 0, error) != GpuStatus::Ok) {
    std::printf("FAIL: loading the batch kernel: %s\n", error.c_str());
    return nullptr;
  }
  return device;
}

bool runBatch(GpuDevice &device, const GpuBatchRequest &request, GpuBatchResult &result) {
  std::string error;
  if (device.runBatch(request, result, error) == GpuStatus::Ok)
    return true;
  std::printf("  batch run failed: %s\n", error.c_str());
  return false;
}

std::vector<float> cpuLogits(const Artifact &artifact, const std::vector<int64_t> &tokens) {
  WeightTable weights = unpackWeights(artifact.weights, artifact.weightData);
  CpuExecutor executor(artifact.graph, artifact.schedule, weights);
  std::vector<float> logits;
  for (int64_t token : tokens) {
    std::vector<float> step = executor.step(token);
    logits.insert(logits.end(), step.begin(), step.end());
  }
  return logits;
}

int checkBatch(const std::string &path, int64_t maxContext, int64_t rows,
               const TargetDescription &target) {
  std::string whyNot;
  std::unique_ptr<GpuDevice> device = GpuDevice::open(whyNot);
  if (!device) {
    std::printf("SKIP: %s\n", whyNot.c_str());
    return kSkipExit;
  }
  std::printf("%s, a batch of %lld, max context %lld, %s KV cache, on %s\n", path.c_str(),
              static_cast<long long>(rows), static_cast<long long>(maxContext),
              target.kvCache == BufferElement::BF16 ? "bf16" : "f32", device->describe().c_str());
  std::optional<BatchModel> model = loadBatchModel(path, maxContext, rows, target);
  if (!model)
    return 1;
  maxContext = model->decode.graph.maxContext;
  std::unique_ptr<BuiltArtifact> built = compileBatch(*model, {});
  if (!built)
    return 1;
  const Artifact &artifact = built->artifact;
  const int64_t vocab = artifact.facts.vocab;
  if (int loaded = loadOnDevice(*device, artifact); loaded != 0)
    return loaded;
  std::unique_ptr<Artifact> view;
  std::unique_ptr<GpuDevice> batchDevice = loadBatchDevice(artifact, view);
  if (!batchDevice)
    return 1;

  // Teacher forcing: prompts of different lengths, the longest 24.
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t r = 0; r < rows; ++r)
    prompts.push_back(someTokens(std::min<int64_t>(24 - 3 * (r % 4), maxContext), vocab, 7 + r));
  GpuBatchResult forced, again;
  GpuBatchRequest forcing{prompts, 0, true, true};
  if (!runBatch(*batchDevice, forcing, forced) || !runBatch(*batchDevice, forcing, again))
    return 1;
  report(forced.logits == again.logits, "two batch launches give the same bits");
  double worstCpu = 0, worstGpu = 0, largest = 0;
  int clear = 0, agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> cpu = cpuLogits(artifact, prompts[r]);
    GpuRunResult alone;
    std::string error;
    if (device->run({.tokens = prompts[r], .teacherForced = true, .keepLogits = true}, alone,
                    error) != GpuStatus::Ok) {
      report(false, "the decode kernel on sequence " + std::to_string(r) + ": " + error);
      continue;
    }
    for (size_t step = 0; step < prompts[r].size(); ++step) {
      const float *batchRow = forced.logits.data() + (step * rows + r) * vocab;
      const float *cpuRow = cpu.data() + step * vocab, *aloneRow = alone.logits.data() + step * vocab;
      for (int64_t i = 0; i < vocab; ++i) {
        largest = std::max(largest, std::fabs(double(cpuRow[i])));
        worstCpu = std::max(worstCpu, std::fabs(double(batchRow[i]) - double(cpuRow[i])));
        worstGpu = std::max(worstGpu, std::fabs(double(batchRow[i]) - double(aloneRow[i])));
      }
      Row reference = rowFacts(cpuRow, vocab);
      if (reference.gap < kClearGap)
        continue;
      ++clear;
      agree += rowFacts(batchRow, vocab).argmax == reference.argmax;
    }
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "teacher-forced rows: max error %.2e against the CPU, %.2e against the decode "
                "kernel, of max |logit| %.3f (tolerance %.0e), argmax %d/%d",
                worstCpu / largest, worstGpu / largest, largest, kTolerance, agree, clear);
  report(worstCpu <= kTolerance * largest && worstGpu <= kTolerance * largest && agree == clear,
         line);

  // Greedy generation, every sequence at once, against the decode kernel
  // teacher-forced on what each row generated.
  std::vector<std::vector<int64_t>> starts;
  for (const std::vector<int64_t> &prompt : prompts)
    starts.emplace_back(prompt.begin(), prompt.begin() + std::min<size_t>(prompt.size(), 5));
  const int64_t newTokens = std::min<int64_t>(16, maxContext - 5);
  GpuBatchResult generated;
  if (!runBatch(*batchDevice, {starts, newTokens}, generated))
    return 1;
  clear = agree = 0;
  bool complete = true;
  for (int64_t r = 0; r < rows; ++r) {
    complete = complete && static_cast<int64_t>(generated.generated[r].size()) == newTokens;
    std::vector<int64_t> fed = starts[r];
    fed.insert(fed.end(), generated.generated[r].begin(), generated.generated[r].end() - 1);
    GpuRunResult replay;
    std::string error;
    if (device->run({.tokens = fed, .teacherForced = true, .keepLogits = true}, replay, error) !=
        GpuStatus::Ok) {
      report(false, "the decode kernel replaying row " + std::to_string(r) + ": " + error);
      continue;
    }
    for (size_t i = 0; i < generated.generated[r].size(); ++i) {
      Row row = rowFacts(replay.logits.data() + (starts[r].size() - 1 + i) * vocab, vocab);
      if (row.gap < kClearGap)
        continue;
      ++clear;
      agree += static_cast<int64_t>(row.argmax) == generated.generated[r][i];
    }
  }
  report(complete && agree == clear,
         "greedy rows generate " + std::to_string(newTokens) +
             " tokens each, the decode kernel's where its top-2 gap is clear (" +
             std::to_string(agree) + "/" + std::to_string(clear) + ")");

  // Fewer sequences than rows: the rest idle.
  std::vector<std::vector<int64_t>> fewer(starts.begin(), starts.end() - 1);
  GpuBatchResult partial;
  if (!runBatch(*batchDevice, {fewer, newTokens}, partial))
    return 1;
  bool same = partial.generated.size() == fewer.size();
  for (size_t r = 0; same && r < fewer.size(); ++r)
    same = partial.generated[r] == generated.generated[r];
  report(same, std::to_string(fewer.size()) + " sequences on " + std::to_string(rows) +
                   " rows generate what they did beside the last");

  // An EOS: row 0's fourth new token ends row 0 only.
  int64_t eos = generated.generated[0][3];
  std::unique_ptr<BuiltArtifact> withEos = compileBatch(*model, {eos});
  std::unique_ptr<Artifact> eosView;
  std::unique_ptr<GpuDevice> eosDevice = withEos ? loadBatchDevice(withEos->artifact, eosView) : nullptr;
  GpuBatchResult stopped;
  if (!eosDevice || !runBatch(*eosDevice, {starts, newTokens}, stopped))
    return 1;
  bool ok = true;
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<int64_t> &full = generated.generated[r];
    size_t at = std::find(full.begin(), full.end(), eos) - full.begin();
    std::vector<int64_t> expected(full.begin(), full.begin() + std::min(at + 1, full.size()));
    ok = ok && stopped.generated[r] == expected && stopped.atEos[r] == (at < full.size());
  }
  report(ok, "EOS token " + std::to_string(eos) + " ends each row at its own first one");
  return failures == 0 ? 0 : 1;
}

} // namespace
} // namespace mk

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mk-gpu-batch-check (MODEL.onnx | SHAPE.mlir) [--batch=B] "
                         "[--max-context=N] [--kv-cache=bf16]\n");
    return 2;
  }
  int64_t maxContext = 64, rows = 4;
  mk::TargetDescription target;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--max-context=", 14) == 0) {
      maxContext = std::atoll(argv[i] + 14);
    } else if (std::strncmp(argv[i], "--batch=", 8) == 0) {
      rows = std::atoll(argv[i] + 8);
    } else if (std::strcmp(argv[i], "--kv-cache=bf16") == 0) {
      target.kvCache = mk::BufferElement::BF16;
    } else {
      std::fprintf(stderr, "mk-gpu-batch-check: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (rows < 2) {
    std::fprintf(stderr, "mk-gpu-batch-check: --batch must be at least 2\n");
    return 2;
  }
  return mk::checkBatch(argv[1], maxContext, rows, target);
}
