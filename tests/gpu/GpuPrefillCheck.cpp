// A prompt layer by layer on the GPU (runtime/gpu/Prefill.h) against the
// decode kernel feeding the same tokens one a step:
//
//   mk-gpu-prefill-check (MODEL.onnx | SHAPE.mlir) [--max-context=N] [--kv-cache=bf16]
//                        [--merge-in-o-proj | --o-proj-by-head[=on|off]] [--prompt=P]
//
// Each check prints one line:
//   - the logits at every position of a prompt of P tokens within
//     kTolerance of the decode kernel's (relative to the largest logit: the
//     GEMMs take bf16 inputs where the decode kernel keeps f32), the argmax
//     equal wherever the decode kernel's top-2 gap is clear;
//   - the same prompt in passes of an odd number of rows, each pass
//     attending to the earlier passes' KV slots;
//   - the prompt in two calls, the second from the first's end;
//   - decode going on from a prompt run layer by layer: its logits at the
//     following positions those of the decode kernel fed the whole prompt
//     (the KV slots the prompt kernels wrote are the decode kernel's);
//   - two runs give the same bits;
//   - the first new token picked from the prompt's last row, for prompts
//     of several lengths, that row's argmax.
// With MKRT_PREFILL_ATTENTION=cudnn the prompts' attention is cuDNN's, which
// must run (bench/cudnn_library.py finds a wheel's cuDNN).
// Exit 0 when all pass, 1 when one fails, 77 (ctest's skip) with the reason
// only when the GPU is unavailable.
#include "GpuTestModels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mk {
namespace {

// bf16 GEMM inputs against the decode kernel's f32 ones.
constexpr double kTolerance = 3e-2;

int failures = 0;

void report(bool passed, const std::string &what) {
  std::printf("  %s  %s\n", passed ? "ok  " : "FAIL", what.c_str());
  failures += passed ? 0 : 1;
}

// Logits of `got` against `reference` (both [rows][vocab]): the largest
// difference relative to the largest |logit|, and the argmax agreement
// where the reference's top-2 gap is clear of the tolerance.
struct Comparison {
  double error = 0, largest = 0;
  int clear = 0, agree = 0;
};

Comparison compare(const float *got, const float *reference, size_t rows, int64_t vocab) {
  Comparison c;
  for (size_t i = 0; i < rows * vocab; ++i)
    c.largest = std::max(c.largest, std::fabs(double(reference[i])));
  for (size_t i = 0; i < rows * vocab; ++i)
    c.error = std::max(c.error, std::fabs(double(got[i]) - double(reference[i])));
  for (size_t r = 0; r < rows; ++r) {
    Row expected = rowFacts(reference + r * vocab, vocab);
    if (expected.gap < 4 * kTolerance * c.largest)
      continue;
    ++c.clear;
    c.agree += rowFacts(got + r * vocab, vocab).argmax == expected.argmax;
  }
  c.error /= std::max(c.largest, 1e-30);
  return c;
}

void reportComparison(const Comparison &c, const std::string &what) {
  char line[320];
  std::snprintf(line, sizeof line,
                "%s: max error %.2e of max |logit| %.3f (tolerance %.0e), argmax %d/%d",
                what.c_str(), c.error, c.largest, kTolerance, c.agree, c.clear);
  report(c.error <= kTolerance && c.agree == c.clear, line);
}

bool prefill(GpuDevice &device, const GpuPrefillRequest &request, GpuPrefillResult &result) {
  std::string error;
  if (device.prefill(request, result, error) == GpuStatus::Ok)
    return true;
  report(false, "the prompt layer by layer: " + error);
  return false;
}

bool decode(GpuDevice &device, const GpuRunRequest &request, GpuRunResult &result) {
  std::string error;
  if (device.run(request, result, error) == GpuStatus::Ok)
    return true;
  report(false, "the decode kernel: " + error);
  return false;
}

int checkPrefill(const std::string &path, int64_t maxContext, int64_t promptLength,
                 const TargetDescription &target) {
  std::unique_ptr<GpuDevice> device = openDeviceOrSkip();
  if (!device)
    return kSkipExit;
  std::optional<Model> model = loadModel(path, maxContext, target);
  if (!model)
    return 1;
  maxContext = model->graph.maxContext;
  promptLength = std::min(promptLength, maxContext - 8);
  std::printf("%s, a prompt of %lld, max context %lld, %s KV cache, on %s\n", path.c_str(),
              static_cast<long long>(promptLength), static_cast<long long>(maxContext),
              target.kvCache == BufferElement::BF16 ? "bf16" : "f32", device->describe().c_str());
  std::unique_ptr<BuiltArtifact> built = compile(*model, {});
  if (!built)
    return 1;
  const Artifact &artifact = built->artifact;
  const int64_t vocab = artifact.facts.vocab;
  if (int loaded = loadOnDevice(*device, artifact); loaded != 0)
    return loaded;
  if (std::string why = device->prefillUnavailable(); !why.empty()) {
    // A GPU that runs the decode kernel but not its prompt kernels is a
    // failure of this build (cuBLASLt comes with the CUDA toolkit).
    report(false, "prompts layer by layer are unavailable: " + why);
    return 1;
  }
  // With MKRT_PREFILL_ATTENTION=cudnn the checks below are of cuDNN's
  // attention (runtime/gpu/CudnnAttention.h), which must then run.
  const char *asked = std::getenv("MKRT_PREFILL_ATTENTION");
  const std::string attention = device->promptAttention();
  if (asked && std::string(asked) == "cudnn") {
    report(attention.rfind("cuDNN", 0) == 0, "the prompts' attention asked for is cuDNN's: " +
                                                 attention);
    if (failures)
      return 1;
  } else if (!attention.empty()) {
    std::printf("  the prompts' attention: %s\n", attention.c_str());
  }

  const std::vector<int64_t> tokens = someTokens(promptLength + 4, vocab, 31);
  const std::vector<int64_t> prompt(tokens.begin(), tokens.begin() + promptLength);
  GpuRunResult stepped;
  if (!decode(*device, {.tokens = tokens, .teacherForced = true, .keepLogits = true}, stepped))
    return 1;

  GpuPrefillResult whole, again;
  if (!prefill(*device, {.tokens = prompt, .keepLogits = true}, whole) ||
      !prefill(*device, {.tokens = prompt, .keepLogits = true}, again))
    return 1;
  std::printf("  %lld tokens layer by layer in %.3f ms (%lld rows a pass)\n",
              static_cast<long long>(promptLength), whole.milliseconds,
              static_cast<long long>(whole.rowsPerPass));
  reportComparison(compare(whole.logits.data(), stepped.logits.data(), promptLength, vocab),
                   "every position against the decode kernel");
  report(whole.logits == again.logits, "two runs give the same bits");

  GpuPrefillResult passes;
  if (!prefill(*device, {.tokens = prompt, .keepLogits = true, .maxRows = 37}, passes))
    return 1;
  reportComparison(compare(passes.logits.data(), stepped.logits.data(), promptLength, vocab),
                   "in passes of 37 rows");

  // Two calls, the second's first position the first's end.
  const int64_t split = promptLength / 3;
  GpuPrefillResult first, second;
  if (!prefill(*device, {.tokens = std::vector<int64_t>(prompt.begin(), prompt.begin() + split),
                         .keepLogits = true},
               first) ||
      !prefill(*device,
               {.tokens = std::vector<int64_t>(prompt.begin() + split, prompt.end()),
                .firstPosition = split,
                .keepLogits = true},
               second))
    return 1;
  reportComparison(compare(second.logits.data(), stepped.logits.data() + split * vocab,
                           promptLength - split, vocab),
                   "a second call from position " + std::to_string(split));

  // Decode from the prompt's KV slots: the prompt but its last token layer
  // by layer, then the decode kernel teacher-forced on the rest.
  GpuPrefillResult cache;
  GpuRunResult after;
  if (!prefill(*device, {.tokens = std::vector<int64_t>(tokens.begin(), tokens.begin() + promptLength - 1)},
               cache) ||
      !decode(*device,
              {.tokens = std::vector<int64_t>(tokens.begin() + promptLength - 1, tokens.end()),
               .teacherForced = true,
               .keepLogits = true,
               .firstPosition = promptLength - 1},
              after))
    return 1;
  reportComparison(compare(after.logits.data(), stepped.logits.data() + (promptLength - 1) * vocab,
                           tokens.size() - promptLength + 1, vocab),
                   "decode after the prompt's KV slots");

  // The first new token from the prompt's last row (its lm_head row alone
  // and an argmax), for prompts of several lengths: the argmax of that
  // row's logits in the whole prompt's run, where their top-2 gap passes
  // what two GEMM algorithms may differ by, and the decode kernel's where
  // its gap is clear of the tolerance.
  auto largest = [&](const float *row) {
    double most = 0;
    for (int64_t i = 0; i < vocab; ++i)
      most = std::max(most, std::fabs(double(row[i])));
    return most;
  };
  int ownClear = 0, ownAgree = 0, decodeClear = 0, decodeAgree = 0;
  for (int64_t length :
       {promptLength, promptLength - 1, split, std::min<int64_t>(37, promptLength), int64_t(4)}) {
    GpuPrefillResult picked;
    if (!prefill(*device,
                 {.tokens = std::vector<int64_t>(prompt.begin(), prompt.begin() + length),
                  .firstToken = true},
                 picked))
      return 1;
    const float *ownRow = whole.logits.data() + (length - 1) * vocab;
    const float *referenceRow = stepped.logits.data() + (length - 1) * vocab;
    const Row own = rowFacts(ownRow, vocab), reference = rowFacts(referenceRow, vocab);
    if (own.gap > 1e-4 * largest(ownRow)) {
      ++ownClear;
      ownAgree += picked.firstToken == own.argmax;
    }
    if (reference.gap >= 4 * kTolerance * largest(referenceRow)) {
      ++decodeClear;
      decodeAgree += picked.firstToken == reference.argmax;
    }
  }
  report(ownAgree == ownClear && decodeAgree == decodeClear,
         "the first token from the prompt's last row: the prompt's logits' argmax " +
             std::to_string(ownAgree) + "/" + std::to_string(ownClear) +
             ", the decode kernel's " + std::to_string(decodeAgree) + "/" +
             std::to_string(decodeClear));
  return failures == 0 ? 0 : 1;
}

} // namespace
} // namespace mk

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mk-gpu-prefill-check (MODEL.onnx | SHAPE.mlir) "
                         "[--max-context=N] [--kv-cache=bf16]\n"
                         "                            [--merge-in-o-proj | --o-proj-by-head[=on|off]] "
                         "[--prompt=P]\n");
    return 2;
  }
  int64_t maxContext = 256, prompt = 200;
  mk::TargetDescription target;
  for (int i = 2; i < argc; ++i) {
    if (mk::takeModelFlag(argv[i], maxContext, target))
      continue;
    if (std::strncmp(argv[i], "--prompt=", 9) == 0) {
      prompt = std::atoll(argv[i] + 9);
    } else {
      std::fprintf(stderr, "mk-gpu-prefill-check: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (maxContext < 16 || prompt < 4) {
    std::fprintf(stderr, "mk-gpu-prefill-check: --max-context must be at least 16, --prompt 4\n");
    return 2;
  }
  return mk::checkPrefill(argv[1], maxContext, prompt, target);
}
