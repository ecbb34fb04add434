// A batch on the GPU (a kernel of several rows a step, row r sequence r)
// against the same sequences run one at a time:
//
//   mk-gpu-batch-check (MODEL.onnx | SHAPE.mlir) [--batch=B] [--max-context=N] [--kv-cache=bf16]
//                      [--against-decode]
//
// The model is compiled with a batch of B (default 4), as `mkc compile
// --batch=B --emit=mk` would (the decode kernel, the batch's kernel in
// ROWKERNELS), the batch's kernel loaded on the decode kernel's weights as
// the runtime loads it (GpuDevice::shareWeightsOf), and each check prints
// one line:
//   - teacher forcing B prompts of different lengths at once: each row's
//     logits at each of its positions within kTolerance of the CPU
//     executor's for that sequence alone (relative to the largest logit),
//     and of the decode kernel's on the GPU, the argmax equal wherever the
//     CPU's top-2 gap is clear; rows past a shorter prompt idle (with
//     --against-decode the decode kernel stands in for the CPU: a shape
//     too big for the CPU executor in a test, its inputs cut in slices);
//   - two launches give the same bits, and an idle row's logits are zeros;
//   - greedy generation of every sequence at once: each row's tokens are
//     what the decode kernel, teacher-forced on that sequence, picks where
//     its top-2 gap is clear;
//   - sampled generation (temperature, top-k with top-p, top-p with
//     min-p, a repetition penalty sampled and greedy; two seeds): two
//     launches draw the same, and each row draws what the CPU sampler
//     draws from that row's own logits, penalized by that row's own
//     tokens;
//   - fewer sequences than rows: the idle rows change nothing;
//   - an EOS token ends its own sequence only: the other rows go on with
//     the same tokens;
//   - prompts layer by layer into the batch's caches (the decode model's
//     prompt kernels, GpuPrefillRequest::caches), every other row's, the
//     batch kernel then starting those rows at their last prompt token
//     (GpuBatchRequest::firstPositions) and the others at 0: each row's
//     logits after its prompt within kPromptTolerance of the batch fed the
//     prompts by step (the prompt kernels' GEMMs take bf16 inputs).
// Exit 0 when all pass, 1 when one fails, 77 (ctest's skip) with the reason
// only when the GPU is unavailable.
#include "GpuTestModels.h"

#include "codegen/Megakernel.h"
#include "core/kernels/Sampling.h"
#include "runtime/format/RowKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace mk {
namespace {

constexpr double kTolerance = 2e-3; // of the largest |logit|, as mk-gpu-check
constexpr float kClearGap = 1e-2f;  // top-2 gaps below this may flip either way
constexpr double kPromptTolerance = 3e-2; // prompts layer by layer, as mk-gpu-prefill-check

int failures = 0;

void report(bool passed, const std::string &what) {
  std::printf("  %s  %s\n", passed ? "ok  " : "FAIL", what.c_str());
  failures += passed ? 0 : 1;
}

// The artifact with both kernels, as mkc writes it.
std::unique_ptr<BuiltArtifact> compileBatch(const Model &model, std::vector<int64_t> eos) {
  const ScheduledGraph &step = model.rowSteps.front();
  auto decode = compileMegakernel(model.graph, model.schedule);
  auto batch = compileMegakernel(step.graph, step.schedule);
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
  options.rowSteps = {step};
  options.rowKernels = {std::move(batch->cubin)};
  std::string error;
  auto built = buildArtifact(model.graph, model.schedule, model.weights, std::move(options), error);
  if (!built)
    std::printf("cannot build the artifact: %s\n", error.c_str());
  return built;
}

// The batch step's device, loaded on the weights of `weightsOf` where they
// are the same (GpuDevice::shareWeightsOf), as the runtime loads it;
// nullptr (printed) when it fails.
std::unique_ptr<GpuDevice> loadBatchDevice(const Artifact &artifact,
                                           std::unique_ptr<Artifact> &view,
                                           const GpuDevice &weightsOf) {
  std::string error;
  view = rowStepArtifact(artifact, 0, error);
  std::unique_ptr<GpuDevice> device = view ? GpuDevice::open(error) : nullptr;
  if (device)
    device->shareWeightsOf(weightsOf);
  if (!device || device->load(*view, 0, error) != GpuStatus::Ok) {
    std::printf("FAIL: loading the batch kernel: %s\n", error.c_str());
    return nullptr;
  }
  return device;
}

// The largest difference of `got` from `expected`, relative to expected's
// largest |logit|.
double relativeError(std::span<const float> got, const std::vector<float> &expected) {
  double worst = 0, largest = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    largest = std::max(largest, std::fabs(double(expected[i])));
    worst = std::max(worst, std::fabs(double(got[i]) - double(expected[i])));
  }
  return worst / std::max(largest, 1e-30);
}

bool runBatch(GpuDevice &device, const GpuBatchRequest &request, GpuBatchResult &result) {
  std::string error;
  if (device.runBatch(request, result, error) == GpuStatus::Ok)
    return true;
  report(false, "a batch launch: " + error);
  return false;
}

// Every other row's prompt layer by layer into its caches, then one batch
// launch from each row's last prompt token (the other rows fed theirs by
// step), against the batch fed every prompt by step.
void checkLayeredPrompts(GpuDevice &device, GpuDevice &batchDevice, int64_t rows,
                         int64_t maxContext, int64_t vocab) {
  if (std::string why = device.prefillUnavailable(); !why.empty()) {
    report(false, "prompts layer by layer are unavailable: " + why);
    return;
  }
  // Up to the whole context: a row that starts at its last prompt token
  // runs one step of a launch as long as the longest prompt fed by step,
  // and idles past it (the kernel checks a row's positions up to its
  // activeUntil).
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t r = 0; r < rows; ++r)
    prompts.push_back(someTokens(std::min<int64_t>(40 + 9 * r, maxContext - 1), vocab, 50 + r));
  GpuBatchResult byStep, layered;
  if (!runBatch(batchDevice, {.prompts = prompts, .teacherForced = true, .keepLogits = true},
                byStep))
    return;
  GpuBatchRequest request{.teacherForced = true, .keepLogits = true};
  request.firstPositions.assign(rows, 0);
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 2 == 1) {
      request.prompts.push_back(prompts[r]);
      continue;
    }
    std::string error;
    GpuPrefillRequest prefill{.tokens = std::vector<int64_t>(prompts[r].begin(), prompts[r].end() - 1)};
    prefill.caches = batchDevice.sequenceCaches(r, error);
    GpuPrefillResult done;
    if (prefill.caches.empty() || device.prefill(prefill, done, error) != GpuStatus::Ok) {
      report(false, "row " + std::to_string(r) + "'s prompt layer by layer: " + error);
      return;
    }
    request.prompts.push_back({prompts[r].back()});
    request.firstPositions[r] = static_cast<int64_t>(prompts[r].size()) - 1;
  }
  if (!runBatch(batchDevice, request, layered))
    return;
  // Each row's logits after its last prompt token: the by-step launch's at
  // that row's last prompt step, the layered launch's at its own last.
  double worst = 0, largest = 0;
  int clear = 0, agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *reference =
        byStep.logits.data() + ((prompts[r].size() - 1) * rows + r) * vocab;
    const float *got =
        layered.logits.data() + ((request.prompts[r].size() - 1) * rows + r) * vocab;
    for (int64_t i = 0; i < vocab; ++i) {
      largest = std::max(largest, std::fabs(double(reference[i])));
      worst = std::max(worst, std::fabs(double(got[i]) - double(reference[i])));
    }
    Row expected = rowFacts(reference, vocab);
    if (expected.gap < 4 * kPromptTolerance * largest)
      continue;
    ++clear;
    agree += rowFacts(got, vocab).argmax == expected.argmax;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "every other row's prompt layer by layer into the batch's caches: max error "
                "%.2e of max |logit| %.3f (tolerance %.0e), argmax %d/%d",
                worst / std::max(largest, 1e-30), largest, kPromptTolerance, agree, clear);
  report(worst <= kPromptTolerance * largest && agree == clear, line);
}

int checkBatch(const std::string &path, int64_t maxContext, int64_t rows,
               const TargetDescription &target, bool againstDecode) {
  std::unique_ptr<GpuDevice> device = openDeviceOrSkip();
  if (!device)
    return kSkipExit;
  std::printf("%s, a batch of %lld, max context %lld, %s KV cache, on %s\n", path.c_str(),
              static_cast<long long>(rows), static_cast<long long>(maxContext),
              target.kvCache == BufferElement::BF16 ? "bf16" : "f32", device->describe().c_str());
  std::optional<Model> model = loadModel(path, maxContext, target, {rows});
  if (!model)
    return 1;
  if (model->rowSteps.empty()) {
    std::printf("FAIL: %s has no batch step (the toy graph has none)\n", path.c_str());
    return 1;
  }
  maxContext = model->graph.maxContext;
  std::unique_ptr<BuiltArtifact> built = compileBatch(*model, {});
  if (!built)
    return 1;
  const Artifact &artifact = built->artifact;
  const int64_t vocab = artifact.facts.vocab;
  if (int loaded = loadOnDevice(*device, artifact); loaded != 0)
    return loaded;
  std::unique_ptr<Artifact> view;
  std::unique_ptr<GpuDevice> batchDevice = loadBatchDevice(artifact, view, *device);
  if (!batchDevice)
    return 1;
  // Every check below runs the batch kernel on the decode model's weights.
  report(batchDevice->weightsAddress() != 0 &&
             batchDevice->weightsAddress() == device->weightsAddress(),
         "the batch kernel runs on the decode kernel's copy of the weights");

  // Teacher forcing: prompts of different lengths, the longest 24.
  std::vector<std::vector<int64_t>> prompts;
  for (int64_t r = 0; r < rows; ++r)
    prompts.push_back(someTokens(std::min<int64_t>(24 - 3 * (r % 4), maxContext), vocab, 7 + r));
  GpuBatchResult forced, again;
  GpuBatchRequest forcing{.prompts = prompts, .teacherForced = true, .keepLogits = true};
  if (!runBatch(*batchDevice, forcing, forced) || !runBatch(*batchDevice, forcing, again))
    return 1;
  report(forced.logits == again.logits, "two batch launches give the same bits");
  // A row past its prompt idles: its logits are zeros (GpuBatchResult).
  bool idleZeros = true;
  for (int64_t step = 0; step < forced.steps; ++step)
    for (int64_t r = 0; r < rows; ++r)
      if (step >= static_cast<int64_t>(prompts[r].size()))
        for (int64_t i = 0; i < vocab; ++i)
          idleZeros = idleZeros && forced.logits[(step * rows + r) * vocab + i] == 0.0f;
  report(idleZeros, "an idle row's logits are zeros");
  double worstCpu = 0, worstGpu = 0, largest = 0;
  int clear = 0, agree = 0;
  for (int64_t r = 0; r < rows; ++r) {
    GpuRunResult alone;
    std::string error;
    if (device->run({.tokens = prompts[r], .teacherForced = true, .keepLogits = true}, alone,
                    error) != GpuStatus::Ok) {
      report(false, "the decode kernel on sequence " + std::to_string(r) + ": " + error);
      continue;
    }
    // The reference: the CPU executor, or with --against-decode the decode
    // kernel (itself checked against the CPU by mk-gpu-check), for shapes
    // too big for the CPU executor to run in a test.
    std::vector<float> cpu = againstDecode ? alone.logits : cpuLogits(artifact, prompts[r]);
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
                "teacher-forced rows: max error %.2e against the %s, %.2e against the decode "
                "kernel, of max |logit| %.3f (tolerance %.0e), argmax %d/%d",
                worstCpu / largest, againstDecode ? "decode kernel" : "CPU", worstGpu / largest,
                largest, kTolerance, agree, clear);
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

  // Sampled generation: two launches draw the same, and each row's draws
  // are the CPU sampler's (core/kernels/Sampling.h) on that row's own kept
  // logits at each of its steps (its position the generator's counter).
  // Not the decode kernel's draws for the sequence alone: the tensor-core
  // gemvs of 4 rows or more sum in another order, their logits within the
  // teacher-forced check's tolerance of the decode kernel's but not the
  // same bits, and a draw near a boundary of the cumulative weights may
  // go either way. With a repetition penalty the kept logits are the
  // penalized ones (as one row's are): each must be the row's raw logits,
  // teacher-forced on the tokens it was fed, penalized by the row's own
  // tokens so far (its prompt and its draws; the rows' prompts differ, so
  // a penalty counting another row's tokens, or none, would not match).
  int sampledSame = 0, sampledDraws = 0, launchesSame = 0, cases = 0;
  int penalizedSame = 0, penalizedSteps = 0, penaltyCases = 0;
  std::string firstDifference, firstPenaltyDifference;
  for (uint64_t seed : {3ull, 99ull})
    for (const MkSamplingSettings &settings :
         {mk_sampling_settings(1.0f, 0, 1.0f, 0.0f, 1.0f, seed),
          mk_sampling_settings(0.8f, 40, 0.9f, 0.0f, 1.0f, seed),
          mk_sampling_settings(1.0f, 0, 0.9f, 0.05f, 1.0f, seed),
          mk_sampling_settings(0.9f, 50, 0.95f, 0.02f, 1.3f, seed),
          mk_sampling_settings(0.0f, 0, 1.0f, 0.0f, 1.8f, seed)}) {
      GpuBatchRequest request{starts, newTokens};
      request.sampling = settings;
      request.keepLogits = true;
      GpuBatchResult sampled, sampledAgain;
      if (!runBatch(*batchDevice, request, sampled) || !runBatch(*batchDevice, request, sampledAgain))
        return 1;
      ++cases;
      launchesSame += sampled.generated == sampledAgain.generated;
      if (sampled.logits.size() != static_cast<size_t>(sampled.steps * rows * vocab)) {
        report(false, "a sampled batch kept " + std::to_string(sampled.logits.size()) +
                          " logits, not steps x rows x vocab");
        continue;
      }
      const bool penalty = mk_sampling_has_penalty(&settings);
      std::vector<std::vector<int64_t>> fed(rows); // by position: the prompt, then the draws
      for (int64_t r = 0; r < rows; ++r) {
        fed[r] = starts[r];
        fed[r].insert(fed[r].end(), sampled.generated[r].begin(), sampled.generated[r].end() - 1);
      }
      penaltyCases += penalty;
      GpuBatchResult raw;
      if (penalty &&
          !runBatch(*batchDevice, {.prompts = fed, .teacherForced = true, .keepLogits = true}, raw))
        return 1;
      for (int64_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < sampled.generated[r].size(); ++i) {
          const int64_t step = static_cast<int64_t>(starts[r].size() - 1 + i);
          if (step >= sampled.steps)
            break;
          std::span<const float> logits(sampled.logits.data() + (step * rows + r) * vocab,
                                        static_cast<size_t>(vocab));
          if (penalty) {
            std::vector<float> expected(raw.logits.data() + (step * rows + r) * vocab,
                                        raw.logits.data() + (step * rows + r + 1) * vocab);
            kernels::applyRepetitionPenalty(
                expected, std::span<const int64_t>(fed[r].data(), static_cast<size_t>(step) + 1),
                settings.repetitionPenalty);
            const double error = relativeError(logits, expected);
            ++penalizedSteps;
            if (error <= 1e-6)
              ++penalizedSame;
            else if (firstPenaltyDifference.empty())
              firstPenaltyDifference = "; first difference: row " + std::to_string(r) +
                                       ", step " + std::to_string(step) + ", " +
                                       std::to_string(error) + " of the largest logit";
          }
          const int64_t expected = kernels::sampleToken(logits, settings, step);
          ++sampledDraws;
          if (expected == sampled.generated[r][i])
            ++sampledSame;
          else if (firstDifference.empty())
            firstDifference = "; first difference: seed " + std::to_string(seed) + ", row " +
                              std::to_string(r) + ", step " + std::to_string(step) + ": " +
                              std::to_string(sampled.generated[r][i]) + " drawn, " +
                              std::to_string(expected) + " by the CPU";
        }
    }
  report(launchesSame == cases, "sampled batches: two launches draw the same (" +
                                    std::to_string(launchesSame) + "/" + std::to_string(cases) +
                                    " settings and seeds)");
  report(sampledDraws == rows * newTokens * cases && sampledSame == sampledDraws,
         "sampled rows draw what the CPU sampler draws from their own logits (" +
             std::to_string(sampledSame) + "/" + std::to_string(sampledDraws) + ")" +
             firstDifference);
  report(penalizedSteps == rows * newTokens * penaltyCases && penalizedSame == penalizedSteps,
         "with a repetition penalty each row's logits are its own penalized by its own tokens (" +
             std::to_string(penalizedSame) + "/" + std::to_string(penalizedSteps) + ")" +
             firstPenaltyDifference);

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
  std::unique_ptr<GpuDevice> eosDevice =
      withEos ? loadBatchDevice(withEos->artifact, eosView, *device) : nullptr;
  // Another file's weights (the same values, other bytes) are not shared.
  if (eosDevice)
    report(eosDevice->weightsAddress() != 0 &&
               eosDevice->weightsAddress() != device->weightsAddress(),
           "a batch of another file's weights loads its own copy");
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
  checkLayeredPrompts(*device, *batchDevice, rows, maxContext, vocab);
  return failures == 0 ? 0 : 1;
}

} // namespace
} // namespace mk

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mk-gpu-batch-check (MODEL.onnx | SHAPE.mlir) [--batch=B] "
                         "[--max-context=N] [--kv-cache=bf16] [--against-decode]\n");
    return 2;
  }
  int64_t maxContext = 64, rows = 4;
  bool againstDecode = false;
  mk::TargetDescription target;
  for (int i = 2; i < argc; ++i) {
    if (mk::takeModelFlag(argv[i], maxContext, target))
      continue;
    if (std::strncmp(argv[i], "--batch=", 8) == 0) {
      rows = std::atoll(argv[i] + 8);
    } else if (std::strcmp(argv[i], "--against-decode") == 0) {
      againstDecode = true;
    } else {
      std::fprintf(stderr, "mk-gpu-batch-check: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (rows < 2) {
    std::fprintf(stderr, "mk-gpu-batch-check: --batch must be at least 2\n");
    return 2;
  }
  return mk::checkBatch(argv[1], maxContext, rows, target, againstDecode);
}
