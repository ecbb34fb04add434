// mkrun: runs a .mk file through libmkrt's C API (runtime/mkrt/include/mkrt.h).
//
//   mkrun MODEL.mk --prompt-tokens 1,2,3 -n 64 [--step-times FILE.csv] [--trace FILE.json]
//       greedy generation: prints the new tokens, then ms/token and tokens/s,
//       then the steps' times (min, median, max, last); --step-times writes
//       every step's time as CSV (step,position,ms), --trace every task's
//       wait and run as a Chrome trace-event file (mkrt_session_set_trace)
//   mkrun MODEL.mk --tokens 5,17,42 --logits OUT.npy
//       teacher-forced logits, [tokens, vocab] float32, as `mkc eval` writes them
//
// Options: --device gpu|cpu|auto (default auto), --max-context N.
// Exit codes: 0 success, 1 usage error, 2 the model or the input was refused
// or the run failed, 3 the device is unavailable (no GPU, no driver, no kernel),
// 4 the GPU is there and failed (module load, launch, the kernel's error word).
#include "mkrt.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/TokenList.h"
#include "runtime/mkrun/NpyWriter.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr int kUsageError = 1, kRefused = 2, kNoDevice = 3, kDeviceFailure = 4;

constexpr const char *kUsage =
    "usage: mkrun MODEL.mk [--device gpu|cpu|auto] [--max-context N]\n"
    "             (--prompt-tokens T0,T1,... -n N [--step-times FILE.csv] [--trace FILE.json]\n"
    "              | --tokens T0,T1,... --logits OUT.npy)\n";

struct Arguments {
  std::string model, device = "auto", promptTokens, tokens, logits, stepTimes, trace;
  std::optional<int64_t> newTokens;
  int64_t maxContext = 0;
};

int usage() {
  std::fputs(kUsage, stderr);
  return kUsageError;
}

int refuse(const std::string &message, int code = kRefused) {
  std::fprintf(stderr, "mkrun: error: %s\n", message.c_str());
  return code;
}

int exitCodeOf(mkrt_status status) {
  switch (status) {
  case MKRT_ERROR_NO_DEVICE:
    return kNoDevice;
  case MKRT_ERROR_DEVICE_FAILURE:
    return kDeviceFailure;
  default:
    return kRefused;
  }
}

using mk::parseCount;
using mk::parseTokenList;

// 0 when `args` is complete, else the exit code to return.
int parseArguments(int argc, char **argv, Arguments &args) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // "--flag=value" or "--flag value".
    auto value = [&](const std::string &flag) -> std::optional<std::string> {
      if (arg.rfind(flag + "=", 0) == 0)
        return arg.substr(flag.size() + 1);
      if (arg == flag && i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value("--device")) {
      args.device = *v;
    } else if (auto v = value("--max-context")) {
      if (!parseCount(*v, args.maxContext) || args.maxContext == 0)
        return refuse("--max-context must be a positive integer, got '" + *v + "'");
    } else if (auto v = value("--prompt-tokens")) {
      args.promptTokens = *v;
    } else if (auto v = value("-n")) {
      int64_t n = 0;
      if (!parseCount(*v, n))
        return refuse("-n must be a non-negative integer, got '" + *v + "'");
      args.newTokens = n;
    } else if (auto v = value("--tokens")) {
      args.tokens = *v;
    } else if (auto v = value("--logits")) {
      args.logits = *v;
    } else if (auto v = value("--step-times")) {
      args.stepTimes = *v;
    } else if (auto v = value("--trace")) {
      args.trace = *v;
    } else if (arg.rfind("-", 0) != 0 && args.model.empty()) {
      args.model = arg;
    } else {
      return refuse("unknown argument '" + arg + "'");
    }
  }
  bool generating = !args.promptTokens.empty() || args.newTokens;
  bool evaluating = !args.tokens.empty() || !args.logits.empty();
  bool complete = generating ? !args.promptTokens.empty() && args.newTokens
                             : !args.tokens.empty() && !args.logits.empty();
  if (args.model.empty() || generating == evaluating || !complete)
    return usage();
  if (evaluating && (!args.stepTimes.empty() || !args.trace.empty()))
    return refuse("--step-times and --trace time generation (--prompt-tokens ... -n N), not "
                  "--logits",
                  kUsageError);
  if (args.device != "gpu" && args.device != "cpu" && args.device != "auto")
    return refuse("unknown device '" + args.device + "' (available: gpu, cpu, auto)");
  // Before the run: no output may overwrite the model.
  for (const std::string *output : {&args.logits, &args.stepTimes, &args.trace})
    if (!output->empty())
      if (std::string error = mk::checkOutputFile(*output, {args.model}); !error.empty())
        return refuse(error);
  return 0;
}

// "step times (ms): min 0.981, median 1.002, max 1.350, last 1.010"
void printStepTimes(const double *stepMs, size_t count) {
  if (count == 0)
    return;
  std::vector<double> sorted(stepMs, stepMs + count);
  std::sort(sorted.begin(), sorted.end());
  double median = count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
  std::printf("step times (ms): min %.3f, median %.3f, max %.3f, last %.3f\n", sorted.front(),
              median, sorted.back(), stepMs[count - 1]);
}

// One row per step; each call of libmkrt starts at position 0.
std::string writeStepTimes(const std::string &path, const double *stepMs, size_t count) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return "cannot open '" + path + "' for writing";
  std::fputs("step,position,ms\n", file);
  for (size_t step = 0; step < count; ++step)
    std::fprintf(file, "%zu,%zu,%.6f\n", step, step, stepMs[step]);
  bool written = !std::ferror(file);
  written = std::fclose(file) == 0 && written;
  return written ? "" : "cannot write the step times to '" + path + "'";
}

int generate(mkrt_session *session, const mkrt_info &info, const Arguments &args) {
  std::vector<int64_t> prompt;
  if (!parseTokenList(args.promptTokens, prompt))
    return refuse("--prompt-tokens must be a comma-separated list of token ids, got '" +
                  args.promptTokens + "'");
  // Checked before anything is allocated for them.
  if (*args.newTokens > info.max_context)
    return refuse("-n " + std::to_string(*args.newTokens) + " passes the model's max context of " +
                  std::to_string(info.max_context));
  if (!args.trace.empty() && mkrt_session_set_trace(session, args.trace.c_str()) != MKRT_OK)
    return refuse(mkrt_last_error());
  std::vector<int64_t> tokens(static_cast<size_t>(*args.newTokens));
  size_t produced = 0;
  mkrt_timing timing;
  mkrt_status status = mkrt_generate(session, prompt.data(), prompt.size(), tokens.size(),
                                     tokens.data(), &produced, &timing);
  if (status != MKRT_OK)
    return refuse(mkrt_last_error(), exitCodeOf(status));
  std::printf("tokens:");
  for (size_t i = 0; i < produced; ++i)
    std::printf(" %lld", static_cast<long long>(tokens[i]));
  std::printf("\n%zu tokens%s, %lld steps in %.3f ms: %.3f ms/token, %.1f tokens/s on %s\n",
              produced, timing.stopped_at_eos ? " (stopped at EOS)" : "",
              static_cast<long long>(timing.steps), timing.total_ms, timing.ms_per_token,
              timing.tokens_per_second, mkrt_session_device(session));
  if (timing.kernel_ms != timing.total_ms)
    std::printf("kernel: %.3f ms\n", timing.kernel_ms);
  printStepTimes(timing.step_ms, timing.num_step_ms);
  if (!args.stepTimes.empty()) {
    std::string error = writeStepTimes(args.stepTimes, timing.step_ms, timing.num_step_ms);
    if (!error.empty())
      return refuse(error);
  }
  return 0;
}

int evaluate(mkrt_session *session, const mkrt_info &info, const Arguments &args) {
  std::vector<int64_t> tokens;
  if (!parseTokenList(args.tokens, tokens))
    return refuse("--tokens must be a comma-separated list of token ids, got '" + args.tokens +
                  "'");
  if (tokens.size() > static_cast<size_t>(info.max_context))
    return refuse(std::to_string(tokens.size()) + " tokens pass the model's max context of " +
                  std::to_string(info.max_context));
  std::vector<float> logits(tokens.size() * static_cast<size_t>(info.vocab));
  mkrt_status status = mkrt_eval_logits(session, tokens.data(), tokens.size(), logits.data());
  if (status != MKRT_OK)
    return refuse(mkrt_last_error(), exitCodeOf(status));
  std::string error =
      mk::writeNpyMatrix(args.logits, logits, static_cast<int64_t>(tokens.size()), info.vocab);
  if (!error.empty())
    return refuse(error);
  std::printf("logits [%zu, %lld] -> %s on %s\n", tokens.size(), static_cast<long long>(info.vocab),
              args.logits.c_str(), mkrt_session_device(session));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Arguments args;
  if (int status = parseArguments(argc, argv, args))
    return status;

  char error[1024];
  mkrt_model *model = nullptr;
  mkrt_status status = mkrt_open(args.model.c_str(), &model, error, sizeof error);
  if (status != MKRT_OK)
    return refuse(error, exitCodeOf(status));
  mkrt_info info;
  mkrt_model_info(model, &info);

  mkrt_session *session = nullptr;
  status = mkrt_session_create(model, args.device.c_str(), args.maxContext, &session, error,
                               sizeof error);
  int code = status != MKRT_OK            ? refuse(error, exitCodeOf(status))
             : !args.promptTokens.empty() ? generate(session, info, args)
                                          : evaluate(session, info, args);
  mkrt_session_destroy(session);
  mkrt_close(model);
  return code;
}
