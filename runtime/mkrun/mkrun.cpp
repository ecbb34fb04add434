// mkrun: runs a .mk file through libmkrt's C API (runtime/mkrt/include/mkrt.h).
//
//   mkrun MODEL.mk --prompt-tokens 1,2,3 -n 64 [--step-times FILE.csv] [--trace FILE.json]
//       greedy generation: prints the new tokens, then the prompt's and the
//       generation's figures apart, as llama-bench does (prompt: tokens, ms,
//       tokens/s; generation: tokens, ms/token median/min/max, tokens/s);
//       --step-times writes every step's time as CSV (step,position,phase,ms),
//       --trace every task's wait and run as a Chrome trace-event file
//   mkrun MODEL.mk --prompt-tokens 1,2,3 -n 64 --temperature 0.8 --top-p 0.9 --seed 7 --stream
//       sampled in the kernel (greedy by default), the tokens printed as the
//       running kernel produces them; --cancel-after N stops it after N
//   mkrun MODEL.mk --start-position 4096 --prompt-tokens 1 -n 33 --step-times FILE.csv
//       the same from position 4096, the cache below it as the session holds
//       it (zeros): for timing a step at a position without a prompt
//   mkrun MODEL.mk --prompt-tokens 1,2,3 --prompt-tokens 9,8 -n 16
//   mkrun MODEL.mk --batch-file prompts.txt -n 16 --device cpu
//       a batch: each prompt a sequence of its own, all in one launch (a .mk
//       compiled with --batch; the GPU runs its batch kernel),
//       each sequence's tokens on a line of its own; --start-position,
//       --step-times and --trace as for one sequence (the trace of the
//       batch step's tasks)
//   mkrun MODEL.mk --tokens 5,17,42 --logits OUT.npy
//       teacher-forced logits, [tokens, vocab] float32, as `mkc eval` writes them
//   mkrun --help | --version
//
// Exit codes: 0 success, 1 usage error, 2 the model or the input was refused
// or the run failed, 3 the device is unavailable (no GPU, no driver, no kernel),
// 4 the GPU is there and failed (module load, launch, the kernel's error word).
#include "mkrt.h"
#include "core/support/Npy.h"
#include "core/support/RegularFile.h"
#include "core/support/TokenList.h"
#include "runtime/format/MkFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr int kUsageError = 1, kRefused = 2, kNoDevice = 3, kDeviceFailure = 4;

constexpr const char *kHelp =
    "usage: mkrun MODEL.mk --prompt-tokens T0,T1,... -n N [options]\n"
    "       mkrun MODEL.mk --tokens T0,T1,... --logits OUT.npy [options]\n"
    "       mkrun --help | --version\n"
    "\n"
    "Runs a model compiled by `mkc compile --emit=mk`: greedy generation after a\n"
    "prompt, with the prompt's and the generation's times reported apart, or\n"
    "teacher-forced logits as `mkc eval` writes them.\n"
    "\n"
    "options:\n"
    "  --prompt-tokens T0,...  the prompt, comma-separated token ids; given again, a\n"
    "                          batch: each a sequence of its own in one launch (a\n"
    "                          .mk compiled with `mkc compile --batch=B`)\n"
    "  --batch-file FILE       the prompts of a batch, one a line as --prompt-tokens\n"
    "                          takes them (blank lines and lines from '#' skipped)\n"
    "  -n N                    the most new tokens to generate (fewer at an EOS token)\n"
    "  --temperature T         sample at temperature T (default 0: greedy)\n"
    "  --top-k K               sample among the K most likely (0: all; at most 1024)\n"
    "  --top-p P               sample among the fewest reaching probability P, in (0, 1]\n"
    "  --min-p M               drop tokens less likely than M times the most likely\n"
    "  --repetition-penalty R  penalize the context's tokens (HF's rule; 1: off)\n"
    "  --seed S                the sampling seed (default 0): the same seed gives the\n"
    "                          same tokens on the GPU and the CPU (prompts of 32\n"
    "                          tokens or more: see --prompt-by-step)\n"
    "  --stream                print each token as the running kernel produces it\n"
    "  --cancel-after N        stream, and stop the generation after N new tokens (the\n"
    "                          host's cancel, as a client that goes away)\n"
    "  --prompt-by-step        on the GPU, feed a prompt of 32 tokens or more one token\n"
    "                          a decode step too, instead of layer by layer (bf16\n"
    "                          matrix inputs: its tokens may differ from the CPU's\n"
    "                          where the top-2 gap is within ~1e-2 of the largest logit)\n"
    "  --step-times FILE.csv   every step's time: step,position,phase,ms, with phase\n"
    "                          prompt or generation (a batch: the positions of its\n"
    "                          sequences, which start at 0 together)\n"
    "  --trace FILE.json       every task's wait and run, a Chrome trace-event file\n"
    "                          (ui.perfetto.dev)\n"
    "  --tokens T0,...         teacher forcing: the tokens fed\n"
    "  --logits OUT.npy        teacher forcing: where the [tokens, vocab] logits go\n"
    "  --device gpu|cpu|auto   where to run (default auto: the GPU when it can run the\n"
    "                          file, else the CPU executor with a note)\n"
    "  --max-context N         positions for the run, at most the compiled ones\n"
    "  --start-position P      place the first token (of a batch: each sequence's) at\n"
    "                          position P instead of 0; the cache slots below P are\n"
    "                          attended to as they are (zeros in a new session), so\n"
    "                          the outputs belong to no real context: it exists to\n"
    "                          time a step at a position without feeding a prompt\n"
    "                          through every position before it.\n"
    "                          Refused when P + the positions the run needs pass the\n"
    "                          max context; step times and traces count from P\n"
    "  -h, --help              this help\n"
    "  --version               libmkrt's version and the CUDA driver found\n"
    "Every option that takes a value may be written --flag=value or --flag value.\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model or the input was refused or\n"
    "the run failed, 3 the device is unavailable (no GPU, no driver, no kernel in\n"
    "the file, a GPU that cannot run it), 4 the GPU is there and failed (loading\n"
    "the kernel, the launch, an error the kernel reported)\n";

struct Arguments {
  std::string model, device = "auto", promptTokens, tokens, logits, stepTimes, trace, batchFile;
  std::vector<std::string> morePrompts; // --prompt-tokens given again: a batch
  std::optional<int64_t> newTokens;
  int64_t maxContext = 0;
  int64_t startPosition = 0;
  mkrt_sampling sampling{0.0, 0, 1.0, 0.0, 1.0, 0};
  bool sampled = false; // a sampling flag was given
  bool stream = false;
  bool promptByStep = false;
  std::optional<int64_t> cancelAfter;
};

// A number for a sampling flag; its range is libmkrt's to check.
bool parseNumber(const std::string &text, double &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool parseInteger(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  value = parsed;
  return errno == 0 && end == text.c_str() + text.size();
}

// The prompts of a batch file, one a line, into args as if each were given
// by --prompt-tokens; "" or what is wrong, with the line. Only a regular
// file of at most kMostBatchFileBytes is read.
constexpr size_t kMostBatchFileBytes = size_t{64} << 20;

std::string readBatchFile(const std::string &path, Arguments &args) {
  std::string error;
  int fd = mk::openRegularFile(path, "batch file", error);
  if (fd < 0)
    return error;
  std::string text;
  char buffer[1 << 16];
  ssize_t got = 0;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0 && text.size() <= kMostBatchFileBytes)
    text.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  if (got < 0)
    return "cannot read batch file '" + path + "'";
  if (text.size() > kMostBatchFileBytes)
    return "batch file '" + path + "' is larger than " +
           std::to_string(kMostBatchFileBytes >> 20) + " MiB";
  std::istringstream file(text);
  std::string line;
  std::vector<int64_t> ignored;
  for (int number = 1; std::getline(file, line); ++number) {
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#')
      continue;
    size_t last = line.find_last_not_of(" \t\r");
    std::string prompt = line.substr(first, last - first + 1);
    if (!mk::parseTokenList(prompt, ignored))
      return "batch file '" + path + "' line " + std::to_string(number) +
             ": a prompt must be a comma-separated list of token ids, got '" + prompt + "'";
    if (args.promptTokens.empty())
      args.promptTokens = prompt;
    else
      args.morePrompts.push_back(prompt);
  }
  if (args.promptTokens.empty())
    return "batch file '" + path + "' holds no prompt";
  return "";
}

int usageError(const std::string &message) {
  std::fprintf(stderr, "mkrun: error: %s\n", message.c_str());
  std::string synopsis(kHelp, std::string(kHelp).find("\n\n"));
  std::fprintf(stderr, "%s\n('mkrun --help' lists every option)\n", synopsis.c_str());
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

// Prints `text` to stdout; 0, or 2 when stdout does not take it.
int printOut(const std::string &text) {
  bool written = std::fputs(text.c_str(), stdout) >= 0 && std::fflush(stdout) == 0;
  return written ? 0 : refuse("cannot write to stdout");
}

// 0 when `args` is complete, else the exit code to return; -1 when --help or
// --version was answered.
int parseArguments(int argc, char **argv, Arguments &args) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h")
      return printOut(kHelp) == 0 ? -1 : kRefused;
    if (arg == "--version")
      return printOut(std::string("mkrun: ") + mkrt_version() + "\nCUDA driver: " +
                      mkrt_cuda_driver_version() + "\n") == 0
                 ? -1
                 : kRefused;
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool missing = false;
    // "--flag=value" or "--flag value".
    auto value = [&](const std::string &flag) -> std::optional<std::string> {
      if (arg.rfind(flag + "=", 0) == 0)
        return arg.substr(flag.size() + 1);
      if (arg != flag)
        return std::nullopt;
      if (i + 1 < argc)
        return std::string(argv[++i]);
      missing = true;
      return std::nullopt;
    };
    if (auto v = value("--device")) {
      args.device = *v;
    } else if (auto v = value("--max-context")) {
      if (!parseCount(*v, args.maxContext) || args.maxContext == 0)
        return usageError("--max-context must be a positive integer, got '" + *v + "'");
    } else if (auto v = value("--start-position")) {
      if (!parseCount(*v, args.startPosition))
        return usageError("--start-position must be a non-negative integer, got '" + *v + "'");
    } else if (auto v = value("--prompt-tokens")) {
      if (args.promptTokens.empty())
        args.promptTokens = *v;
      else
        args.morePrompts.push_back(*v);
    } else if (auto v = value("--batch-file")) {
      args.batchFile = *v;
    } else if (auto v = value("-n")) {
      int64_t n = 0;
      if (!parseCount(*v, n))
        return usageError("-n must be a non-negative integer, got '" + *v + "'");
      args.newTokens = n;
    } else if (auto v = value("--tokens")) {
      args.tokens = *v;
    } else if (auto v = value("--logits")) {
      args.logits = *v;
    } else if (auto v = value("--temperature")) {
      if (!parseNumber(*v, args.sampling.temperature))
        return usageError("--temperature must be a number, got '" + *v + "'");
      args.sampled = true;
    } else if (auto v = value("--top-k")) {
      if (!parseInteger(*v, args.sampling.top_k))
        return usageError("--top-k must be an integer, got '" + *v + "'");
      args.sampled = true;
    } else if (auto v = value("--top-p")) {
      if (!parseNumber(*v, args.sampling.top_p))
        return usageError("--top-p must be a number, got '" + *v + "'");
      args.sampled = true;
    } else if (auto v = value("--min-p")) {
      if (!parseNumber(*v, args.sampling.min_p))
        return usageError("--min-p must be a number, got '" + *v + "'");
      args.sampled = true;
    } else if (auto v = value("--repetition-penalty")) {
      if (!parseNumber(*v, args.sampling.repetition_penalty))
        return usageError("--repetition-penalty must be a number, got '" + *v + "'");
      args.sampled = true;
    } else if (auto v = value("--seed")) {
      int64_t seed = 0;
      if (!parseCount(*v, seed))
        return usageError("--seed must be a non-negative integer, got '" + *v + "'");
      args.sampling.seed = static_cast<uint64_t>(seed);
      args.sampled = true;
    } else if (arg == "--stream") {
      args.stream = true;
    } else if (arg == "--prompt-by-step") {
      args.promptByStep = true;
    } else if (auto v = value("--cancel-after")) {
      int64_t n = 0;
      if (!parseCount(*v, n) || n == 0)
        return usageError("--cancel-after must be a positive integer, got '" + *v + "'");
      args.cancelAfter = n;
      args.stream = true;
    } else if (auto v = value("--step-times")) {
      args.stepTimes = *v;
    } else if (auto v = value("--trace")) {
      args.trace = *v;
    } else if (missing) {
      return usageError("option '" + arg + "' needs a value");
    } else if (arg.rfind("-", 0) != 0 && args.model.empty()) {
      args.model = arg;
    } else {
      return usageError("unknown argument '" + arg + "'");
    }
  }
  if (!args.batchFile.empty()) {
    if (!args.promptTokens.empty())
      return usageError("give a batch's prompts by --prompt-tokens or by --batch-file, not both");
    if (std::string error = readBatchFile(args.batchFile, args); !error.empty())
      return refuse(error);
  }
  bool generating = !args.promptTokens.empty() || args.newTokens;
  bool evaluating = !args.tokens.empty() || !args.logits.empty();
  if (args.model.empty())
    return usageError("no model given");
  if (generating == evaluating)
    return usageError(generating ? "generation (--prompt-tokens, -n) and teacher forcing "
                                   "(--tokens, --logits) do not go together"
                                 : "say what to run: --prompt-tokens and -n, or --tokens "
                                   "and --logits");
  if (generating && (args.promptTokens.empty() || !args.newTokens))
    return usageError("generation needs both --prompt-tokens and -n");
  if (evaluating && (args.tokens.empty() || args.logits.empty()))
    return usageError("teacher forcing needs both --tokens and --logits");
  if (evaluating && (args.sampled || args.stream))
    return usageError("sampling and --stream apply to generation (--prompt-tokens ... -n N), "
                      "not --logits");
  if (evaluating && (!args.stepTimes.empty() || !args.trace.empty()))
    return usageError("--step-times and --trace time generation (--prompt-tokens ... -n N), "
                      "not --logits");
  if (args.device != "gpu" && args.device != "cpu" && args.device != "auto")
    return usageError("unknown device '" + args.device + "' (available: gpu, cpu, auto)");
  std::vector<int64_t> ignored;
  const std::string &list = generating ? args.promptTokens : args.tokens;
  if (!parseTokenList(list, ignored))
    return usageError(std::string(generating ? "--prompt-tokens" : "--tokens") +
                      " must be a comma-separated list of token ids, got '" + list + "'");
  for (const std::string &more : args.morePrompts)
    if (!parseTokenList(more, ignored))
      return usageError("--prompt-tokens must be a comma-separated list of token ids, got '" +
                        more + "'");
  if (!args.morePrompts.empty() && args.stream)
    return usageError("a batch (--prompt-tokens given more than once, or --batch-file) takes "
                      "no --stream or --cancel-after");
  // Before the run: no output may overwrite the model.
  for (const std::string *output : {&args.logits, &args.stepTimes, &args.trace})
    if (!output->empty())
      if (std::string error = mk::checkOutputFile(*output, {args.model}); !error.empty())
        return refuse(error);
  return 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The first `promptSteps` steps feed the prompt (the last of them yields the
// first new token: its time is the time to the first token); every later
// step feeds a generated token and yields the next.
//   prompt: 3 tokens in 2.931 ms, 1023.5 tokens/s
//   generation: 7 tokens, ms/token median 0.981 min 0.950 max 1.350, 1019.4 tokens/s
void printPhases(const double *stepMs, size_t count, size_t promptSteps) {
  size_t prompt = std::min(promptSteps, count);
  double promptMs = 0;
  for (size_t i = 0; i < prompt; ++i)
    promptMs += stepMs[i];
  std::printf("prompt: %zu tokens in %.3f ms, %.1f tokens/s\n", prompt, promptMs,
              promptMs > 0 ? prompt * 1000.0 / promptMs : 0.0);
  std::vector<double> generation(stepMs + prompt, stepMs + count);
  if (generation.empty()) {
    std::printf("generation: 0 tokens (the first new token comes from the prompt's last step)\n");
    return;
  }
  double total = 0;
  for (double ms : generation)
    total += ms;
  auto [fastest, slowest] = std::minmax_element(generation.begin(), generation.end());
  std::printf("generation: %zu tokens, ms/token median %.3f min %.3f max %.3f, %.1f tokens/s\n",
              generation.size(), median(generation), *fastest, *slowest,
              total > 0 ? generation.size() * 1000.0 / total : 0.0);
}

// One row per step; step 0 runs at the start position.
std::string writeStepTimes(const std::string &path, const double *stepMs, size_t count,
                           size_t promptSteps, int64_t startPosition) {
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return "cannot open '" + path + "' for writing";
  std::fputs("step,position,phase,ms\n", file);
  for (size_t step = 0; step < count; ++step)
    std::fprintf(file, "%zu,%lld,%s,%.6f\n", step,
                 static_cast<long long>(startPosition) + static_cast<long long>(step),
                 step < promptSteps ? "prompt" : "generation", stepMs[step]);
  bool written = !std::ferror(file);
  written = std::fclose(file) == 0 && written;
  return written ? "" : "cannot write the step times to '" + path + "'";
}

// The positions a run fills: teacher forcing one per token; generation the
// prompt's, then one per new token but the last (returned, not fed).
int64_t positionsFilled(const Arguments &args) {
  std::vector<int64_t> tokens;
  if (!args.tokens.empty()) {
    parseTokenList(args.tokens, tokens); // checked in parseArguments
    return static_cast<int64_t>(tokens.size());
  }
  // A batch fills as many as its longest sequence.
  parseTokenList(args.promptTokens, tokens);
  size_t longest = tokens.size();
  for (const std::string &more : args.morePrompts) {
    std::vector<int64_t> prompt;
    parseTokenList(more, prompt);
    longest = std::max(longest, prompt.size());
  }
  return static_cast<int64_t>(longest) + std::max<int64_t>(*args.newTokens, 1) - 1;
}

// "" when the run fits after --start-position, else the refusal, naming the
// option. Checked before the session exists: a refusal loads nothing onto
// the GPU.
std::string startPositionRefusal(const mkrt_info &info, const Arguments &args) {
  // A --max-context past the compiled one is refused by the session, saying so.
  if (args.startPosition == 0 || args.maxContext > info.max_context)
    return "";
  bool compiled = args.maxContext == 0;
  int64_t context = compiled ? info.max_context : args.maxContext;
  int64_t positions = positionsFilled(args);
  if (args.startPosition < context && positions <= context - args.startPosition)
    return "";
  return "--start-position " + std::to_string(args.startPosition) + " and the " +
         std::to_string(positions) + " positions the run fills pass the max context of " +
         std::to_string(context) +
         (compiled ? " (the compiled one: `mkc compile --max-context`)" : " (--max-context)");
}

// --stream: prints each token as libmkrt hands it over, flushed, and with
// --cancel-after N asks to stop after the Nth.
struct StreamPrinter {
  int64_t cancelAfter = 0; // 0: never
  static int onToken(void *self, int64_t token, size_t index) {
    auto *printer = static_cast<StreamPrinter *>(self);
    std::printf(" %lld", static_cast<long long>(token));
    std::fflush(stdout);
    return printer->cancelAfter > 0 && static_cast<int64_t>(index) + 1 >= printer->cancelAfter;
  }
};

int generate(mkrt_session *session, const mkrt_info &info, const Arguments &args) {
  std::vector<int64_t> prompt;
  parseTokenList(args.promptTokens, prompt); // checked in parseArguments
  // Checked before anything is allocated for them.
  if (*args.newTokens > info.max_context)
    return refuse("-n " + std::to_string(*args.newTokens) + " passes the model's max context of " +
                  std::to_string(info.max_context));
  if (!args.trace.empty() && mkrt_session_set_trace(session, args.trace.c_str()) != MKRT_OK)
    return refuse(mkrt_last_error());
  if (mkrt_session_set_sampling(session, &args.sampling) != MKRT_OK)
    return refuse(mkrt_last_error());
  std::vector<int64_t> tokens(static_cast<size_t>(*args.newTokens));
  size_t produced = 0;
  mkrt_timing timing;
  mkrt_status status;
  if (args.stream) {
    // Each token printed as it comes; the line is the same as without
    // --stream.
    StreamPrinter printer{args.cancelAfter.value_or(0)};
    std::printf("tokens:");
    std::fflush(stdout);
    status = mkrt_generate_stream(session, prompt.data(), prompt.size(), tokens.size(),
                                  StreamPrinter::onToken, &printer, tokens.data(), &produced,
                                  &timing);
    std::printf("\n");
  } else {
    status = mkrt_generate(session, prompt.data(), prompt.size(), tokens.size(), tokens.data(),
                           &produced, &timing);
  }
  if (status != MKRT_OK)
    return refuse(mkrt_last_error(), exitCodeOf(status));
  if (!args.stream) {
    std::printf("tokens:");
    for (size_t i = 0; i < produced; ++i)
      std::printf(" %lld", static_cast<long long>(tokens[i]));
    std::printf("\n");
  }
  printPhases(timing.step_ms, timing.num_step_ms, prompt.size());
  std::printf("total: %zu new tokens%s, %lld steps in %.3f ms on %s\n", produced,
              timing.stopped_at_eos        ? " (stopped at EOS)"
              : timing.stopped_by_callback ? " (cancelled)"
                                           : "",
              static_cast<long long>(timing.steps), timing.total_ms,
              mkrt_session_device(session));
  if (timing.kernel_ms != timing.total_ms)
    std::printf("kernel: %.3f ms\n", timing.kernel_ms);
  if (!args.stepTimes.empty()) {
    std::string error =
        writeStepTimes(args.stepTimes, timing.step_ms, timing.num_step_ms, prompt.size(),
                       args.startPosition);
    if (!error.empty())
      return refuse(error);
  }
  return std::fflush(stdout) == 0 ? 0 : refuse("cannot write to stdout");
}

// A batch: a line of tokens per sequence, then the launch's figures.
//   tokens[0]: 5 9 12
//   tokens[1]: 7 7 3
//   batch: 2 sequences, 6 new tokens in 9 steps, 3.120 ms, 1923.1 tokens/s on cpu (...);
//     ms/step median 0.347
int generateBatch(mkrt_session *session, const mkrt_info &info, const Arguments &args) {
  std::vector<std::vector<int64_t>> prompts(1);
  parseTokenList(args.promptTokens, prompts[0]); // checked in parseArguments
  for (const std::string &more : args.morePrompts)
    parseTokenList(more, prompts.emplace_back());
  if (*args.newTokens > info.max_context)
    return refuse("-n " + std::to_string(*args.newTokens) + " passes the model's max context of " +
                  std::to_string(info.max_context));
  if (!args.trace.empty() && mkrt_session_set_trace(session, args.trace.c_str()) != MKRT_OK)
    return refuse(mkrt_last_error());
  if (mkrt_session_set_sampling(session, &args.sampling) != MKRT_OK)
    return refuse(mkrt_last_error());
  std::vector<const int64_t *> starts;
  std::vector<size_t> lengths;
  for (const std::vector<int64_t> &prompt : prompts) {
    starts.push_back(prompt.data());
    lengths.push_back(prompt.size());
  }
  size_t newTokens = static_cast<size_t>(*args.newTokens);
  std::vector<int64_t> tokens(prompts.size() * newTokens);
  std::vector<size_t> produced(prompts.size());
  mkrt_timing timing;
  mkrt_status status = mkrt_generate_batch(session, starts.data(), lengths.data(), prompts.size(),
                                           newTokens, tokens.data(), produced.data(), &timing);
  if (status != MKRT_OK)
    return refuse(mkrt_last_error(), exitCodeOf(status));
  size_t total = 0;
  for (size_t s = 0; s < prompts.size(); ++s) {
    std::printf("tokens[%zu]:", s);
    for (size_t i = 0; i < produced[s]; ++i)
      std::printf(" %lld", static_cast<long long>(tokens[s * newTokens + i]));
    std::printf("\n");
    total += produced[s];
  }
  // Every sequence starts at position 0: step s runs position s of each,
  // a prompt step while the shortest prompt is still fed.
  size_t shortest = prompts.front().size();
  for (const std::vector<int64_t> &prompt : prompts)
    shortest = std::min(shortest, prompt.size());
  if (!args.stepTimes.empty()) {
    std::string error =
        writeStepTimes(args.stepTimes, timing.step_ms, timing.num_step_ms, shortest - 1,
                       args.startPosition);
    if (!error.empty())
      return refuse(error);
  }
  std::vector<double> steps(timing.step_ms, timing.step_ms + timing.num_step_ms);
  std::sort(steps.begin(), steps.end());
  std::printf("batch: %zu sequences, %zu new tokens in %lld steps, %.3f ms, %.1f tokens/s on %s; "
              "ms/step median %.3f\n",
              prompts.size(), total, static_cast<long long>(timing.steps), timing.total_ms,
              timing.tokens_per_second, mkrt_session_device(session),
              steps.empty() ? 0.0 : steps[steps.size() / 2]);
  return std::fflush(stdout) == 0 ? 0 : refuse("cannot write to stdout");
}

int evaluate(mkrt_session *session, const mkrt_info &info, const Arguments &args) {
  std::vector<int64_t> tokens;
  parseTokenList(args.tokens, tokens); // checked in parseArguments
  if (tokens.size() > static_cast<size_t>(info.max_context))
    return refuse(std::to_string(tokens.size()) + " tokens pass the model's max context of " +
                  std::to_string(info.max_context));
  std::vector<float> logits(tokens.size() * static_cast<size_t>(info.vocab));
  mkrt_status status = mkrt_eval_logits(session, tokens.data(), tokens.size(), logits.data());
  if (status != MKRT_OK)
    return refuse(mkrt_last_error(), exitCodeOf(status));
  std::string error = mk::writeNpy(
      args.logits, logits, {static_cast<int64_t>(tokens.size()), static_cast<int64_t>(info.vocab)});
  if (!error.empty())
    return refuse(error);
  std::printf("logits [%zu, %lld] -> %s on %s\n", tokens.size(), static_cast<long long>(info.vocab),
              args.logits.c_str(), mkrt_session_device(session));
  return std::fflush(stdout) == 0 ? 0 : refuse("cannot write to stdout");
}

} // namespace

int main(int argc, char **argv) {
  Arguments args;
  if (argc < 2) {
    std::fputs(kHelp, stderr);
    return kUsageError;
  }
  if (int status = parseArguments(argc, argv, args))
    return status < 0 ? 0 : status;

  char error[1024];
  mkrt_model *model = nullptr;
  mkrt_status status = mkrt_open(args.model.c_str(), &model, error, sizeof error);
  if (status != MKRT_OK)
    return refuse(error, exitCodeOf(status));
  mkrt_info info;
  mkrt_model_info(model, &info);

  if (std::string refusal = startPositionRefusal(info, args); !refusal.empty()) {
    mkrt_close(model);
    return refuse(refusal);
  }

  mkrt_session *session = nullptr;
  status = mkrt_session_create(model, args.device.c_str(), args.maxContext, &session, error,
                               sizeof error);
  if (status == MKRT_OK && args.startPosition > 0) {
    status = mkrt_session_set_start_position(session, args.startPosition);
    if (status != MKRT_OK)
      std::snprintf(error, sizeof error, "%s", mkrt_last_error());
  }
  if (status == MKRT_OK && args.promptByStep) {
    status = mkrt_session_set_prompt_by_step(session, 1);
    if (status != MKRT_OK)
      std::snprintf(error, sizeof error, "%s", mkrt_last_error());
  }
  int code = status != MKRT_OK            ? refuse(error, exitCodeOf(status))
             : !args.morePrompts.empty()  ? generateBatch(session, info, args)
             : !args.promptTokens.empty() ? generate(session, info, args)
                                          : evaluate(session, info, args);
  mkrt_session_destroy(session);
  mkrt_close(model);
  return code;
}
