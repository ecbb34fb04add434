// mkc compile: imports a model and prints its IR at one level of the
// compilation ladder, the way `toyc -emit=` does:
//
//   mlir      the mk IR as imported
//   fused     after the fusion pipeline (passes/Pipeline.h)
//   tasks     the task graph (compiler/driver/Pipeline.h): a summary, then
//             every buffer, operation, event and task
//   schedule  the static schedule: a summary, then every SM's queue
//   cuda      the megakernel's CUDA C++ source (codegen/Megakernel.h)
//   cubin     the megakernel compiled by NVRTC, to -o FILE; its registers,
//             shared memory and spills on stderr
//   mk        the .mk artifact (compiler/driver/WriteArtifact.h), to -o FILE,
//             with the cubin level's kernel and its account (none with
//             --no-kernel, or where NVRTC is missing: such a file runs on
//             the CPU only); the level taken when -o names a .mk file and
//             --emit is not given
// cubin and mk end with one line on stderr saying what was written.
//
// Each level is the one before it plus one stage. Adding one takes its
// enumerator (in ladder order), its name where --emit is parsed, its line in
// the usage, and the function that prints or writes it, called from
// compile().
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"

#include "codegen/Megakernel.h"
#include "codegen/Nvrtc.h"
#include "codegen/ranks/NcclDevicePart.h"
#include "compiler/driver/WriteArtifact.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/RandomWeights.h"
#include "compiler/driver/CompilePhases.h"
#include "compiler/driver/TokenizerFiles.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/ScheduleBlob.h"
#include "compiler/inspect/TaskGraphText.h"
#include "passes/Pipeline.h"
#include "core/support/TokenList.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace mk {

const char *const kCompileHelp =
    "usage: mkc compile MODEL --emit=mlir|fused|tasks|schedule|cuda [-o OUT] [options]\n"
    "       mkc compile MODEL --emit=cubin -o OUT.cubin [options]\n"
    "       mkc compile MODEL [--emit=mk] -o OUT.mk [options]\n"
    "       mkc compile SHAPE.mlir --emit=mk -o OUT.mk --random-weights[=SEED] [options]\n"
    "\n"
    "Compiles a model (ONNX, llama.cpp's GGUF of the llama family, or mk IR in a\n"
    ".mlir file) to one level of the ladder:\n"
    "  mlir       the mk IR as imported\n"
    "  fused      after the fusion passes\n"
    "  tasks      the task graph: a summary, then every buffer, operation, event, task\n"
    "  schedule   the static schedule: a summary, then every SM's queue\n"
    "  cuda       the megakernel's CUDA source\n"
    "  cubin      the megakernel compiled by NVRTC (needs -o)\n"
    "  mk         the .mk artifact: kernel, schedule, bf16 weights (needs -o; the\n"
    "             default when -o names a .mk file)\n"
    "Text levels go to stdout without -o. cubin and mk print one line on stderr: the\n"
    "file written, its size, the target, the kernel, the context, the SMs, the time.\n"
    "\n"
    "options:\n"
    "  --emit=LEVEL             the level above\n"
    "  -o FILE                  the output (never the input; a .mk output must be a\n"
    "                           regular file or new)\n"
    "  --print-ir-after-all     (mlir, fused) print the IR after every pass, on stderr\n"
    "  --max-context=N          (tasks and later) the positions to compile for (at most 1048576)\n"
    "  --num-sms=N              (tasks and later) the SMs to schedule for\n"
    "  --longest-attention-chunk=N\n"
    "                           (tasks and later) the most positions one attention\n"
    "                           chunk task covers, a multiple of 16 from 16 to\n"
    "                           16384, default 4096 (less for large groups of q\n"
    "                           heads; longer: fewer chunk tasks in a build for a\n"
    "                           long context)\n"
    "  --least-gemv-tile-bytes=N\n"
    "                           (tasks and later) the fewest weight bytes a gemv\n"
    "                           tile streams: smaller gemvs get fewer tiles than\n"
    "                           the SMs (default: a tile an SM; fewer measured\n"
    "                           slower)\n"
    "  --kv-cache=f32|bf16      (tasks and later) how the KV caches keep keys and\n"
    "                           values, default f32; bf16 rounds what each step\n"
    "                           writes and halves the bytes a long context reads\n"
    "  --no-logit-picks         (tasks and later) the lm_head writes no picks (its\n"
    "                           tiles' largest logits), so a greedy argmax reads\n"
    "                           every logit, as sampling does\n"
    "  --inline-merge           (tasks and later) each attention merge runs on the SM\n"
    "                           of its KV head's last chunk, right after it, not\n"
    "                           from a queue\n"
    "  --merge-in-o-proj        (tasks and later) o_proj merges the attention chunks'\n"
    "                           partials as it loads its input: no merge phase\n"
    "                           (decode steps; not with --inline-merge or\n"
    "                           --tensor-parallel)\n"
    "  --o-proj-by-head[=on|auto|off]\n"
    "                           (tasks and later) o_proj is cut by q head: a task\n"
    "                           merges one head's chunks and adds its rows' share\n"
    "                           into the output in fixed point: no merge phase\n"
    "                           (decode steps). auto, the default: where a tile's\n"
    "                           weights are at most 32 KiB, and not with\n"
    "                           --inline-merge, --merge-in-o-proj, --fuse-mlp or\n"
    "                           --tensor-parallel; on (the bare flag): wherever\n"
    "                           o_proj can, refused with those; off: merge tasks\n"
    "  --fuse-mlp               (tasks and later) each gated MLP is one phase: a task\n"
    "                           takes a slice of its channels through gate, up and\n"
    "                           down and adds into the output in fixed point\n"
    "  --prefill-chunk=M        (tasks and later) also a step of M prompt tokens,\n"
    "                           2-1024, that the CPU executor runs prompts through,\n"
    "                           M positions a step (docs/m-token-steps.md)\n"
    "  --tensor-parallel=N      (tasks and later) N ranks, Megatron-style: each keeps\n"
    "                           its share of the heads and MLP channels, o_proj and\n"
    "                           down_proj end in an AllReduce (1-64); the .mk\n"
    "                           holds the ranks beside the one-GPU model, and their\n"
    "                           kernel (up to 8 ranks) linked with NCCL's device\n"
    "                           API; cuda and cubin are the ranks' kernel; the CPU\n"
    "                           executor runs them (docs/tensor-parallel.md)\n"
    "  --batch=B[,B...]         (tasks and later) also a step of one row per\n"
    "                           sequence for each batch size B, 2-1024 (the CPU\n"
    "                           executor runs it)\n"
    "  --arch=sm_XX             (cuda, cubin, mk) the target, default sm_90a\n"
    "  --prefetch-bytes=N       (cuda, cubin, mk) L2 prefetch of each SM's next task's\n"
    "                           weights (sm_90 and later), default 0: none\n"
    "  --gemv-loads=N           (cuda, cubin, mk) 16-byte loads in flight per gemv\n"
    "                           lane, 1-16, default 8 (with the weight ring: the\n"
    "                           chunks per lane of one ring slot)\n"
    "  --weight-ring            (cuda, cubin, mk) a producer warp streams the gemvs'\n"
    "                           weights into shared memory ahead of their tasks\n"
    "                           (sm_90 and later; off by default: measured slower)\n"
    "  --gemv-first-weights=W   (cuda, cubin, mk) when gemvs of long rows issue their\n"
    "                           first weights: before-wait (default: into registers\n"
    "                           while they wait), after-wait (as their wait ends,\n"
    "                           under the input's load), copied (into shared memory\n"
    "                           while they wait), after-input\n"
    "  --weight-l2=P            (cuda, cubin, mk) the L2 policy of weight reads:\n"
    "                           evict-first (default: the KV cache and activations\n"
    "                           stay in L2 from step to step) or normal\n"
    "  --chunk-attention=A      (cuda, cubin, mk) the arithmetic of long attention\n"
    "                           chunks over bf16 caches: tensor-cores (default) or\n"
    "                           cuda-cores (f32 scores)\n"
    "  --eos=ID,...             (mk) the tokens that end generation (default: the\n"
    "                           tokenizer files', else a GGUF file's)\n"
    "  --tokenizer=DIR          (mk) the folder of tokenizer.json and, when there,\n"
    "                           tokenizer_config.json and generation_config.json:\n"
    "                           carried into the .mk with the EOS and BOS tokens, the\n"
    "                           chat template and sampling defaults (default: the\n"
    "                           model's folder when it holds a tokenizer.json, else\n"
    "                           a GGUF file's byte-level BPE vocabulary)\n"
    "  --no-tokenizer           (mk) none, even beside the model or in it\n"
    "  --no-kernel              (mk) no kernel: a file for the CPU executor only\n"
    "  --step=decode|batch:B|prefill\n"
    "                           (cuda, cubin) whose kernel: decode's (the default),\n"
    "                           the batch of B sequences of --batch, or the prefill\n"
    "                           chunk's\n"
    "  --random-weights[=SEED]  (mk) fill the weights of a SHAPE.mlir that declares\n"
    "                           them without values, at random (for benchmarks)\n"
    "  -h, --help               this help\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model or a file was refused, the\n"
    "compilation failed or a write failed\n";

namespace {

enum class EmitLevel { Mlir, Fused, Tasks, Schedule, Cuda, Cubin, Mk };

struct CompileArguments {
  std::string model;
  std::optional<EmitLevel> emit;
  std::string output = "-";
  bool printIrAfterAll = false;
  CompileOptions pipeline; // for tasks, schedule and mk
  std::vector<int64_t> eosTokens;
  std::optional<std::string> tokenizer; // for mk: the folder of the tokenizer files
  bool noTokenizer = false;             // for mk: not even those beside the model
  std::string arch = kDefaultArch; // for cuda, cubin and mk
  KernelOptions kernelOptions;     // for cuda, cubin and mk
  bool kernel = true;              // for mk
  std::string step = "decode";     // for cuda and cubin: whose kernel (--step)
  std::optional<uint64_t> randomSeed; // for mk: fill a shape-only model's weights
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int usageError(const llvm::Twine &message) {
  return mk::usageError("compile", kCompileHelp, message);
}

// 0 when `options` is complete, else the exit code to return.
int parseArguments(int argc, char **argv, CompileArguments &options) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto shared = parseCompileOption(arg, options.pipeline);
    if (!shared)
      return usageError(llvm::toString(shared.takeError()));
    if (*shared)
      continue;
    if (arg == "--print-ir-after-all") {
      options.printIrAfterAll = true;
    } else if (arg.consume_front("--emit=")) {
      options.emit = llvm::StringSwitch<std::optional<EmitLevel>>(arg)
                         .Case("mlir", EmitLevel::Mlir)
                         .Case("fused", EmitLevel::Fused)
                         .Case("tasks", EmitLevel::Tasks)
                         .Case("schedule", EmitLevel::Schedule)
                         .Case("cuda", EmitLevel::Cuda)
                         .Case("cubin", EmitLevel::Cubin)
                         .Case("mk", EmitLevel::Mk)
                         .Default(std::nullopt);
      if (!options.emit)
        return usageError("unknown --emit level '" + arg +
                      "' (available: mlir, fused, tasks, schedule, cuda, cubin, mk)");
    } else if (arg == "--no-kernel") {
      options.kernel = false;
    } else if (arg.consume_front("--step=")) {
      options.step = arg.str();
    } else if (arg == "--weight-ring") {
      options.kernelOptions.weightRing = true;
    } else if (arg.consume_front("--gemv-first-weights=")) {
      std::optional<int> mode;
      for (int m = kGemvFirstAfterInput; m <= kGemvFirstBeforeWait; ++m)
        if (arg == gemvFirstWeightsName(m))
          mode = m;
      if (!mode)
        return usageError("unknown --gemv-first-weights '" + arg +
                          "' (available: before-wait, after-wait, copied, after-input)");
      options.kernelOptions.gemvFirstWeights = *mode;
    } else if (arg.consume_front("--weight-l2=")) {
      if (arg != "normal" && arg != "evict-first")
        return usageError("unknown --weight-l2 '" + arg + "' (available: normal, evict-first)");
      options.kernelOptions.weightsEvictFirst = arg == "evict-first";
    } else if (arg.consume_front("--chunk-attention=")) {
      if (arg != "cuda-cores" && arg != "tensor-cores")
        return usageError("unknown --chunk-attention '" + arg +
                          "' (available: cuda-cores, tensor-cores)");
      options.kernelOptions.chunkTensorCores = arg == "tensor-cores";
    } else if (arg == "--random-weights") {
      options.randomSeed = 987654321;
    } else if (arg.consume_front("--random-weights=")) {
      uint64_t seed = 0;
      if (arg.getAsInteger(10, seed))
        return usageError("--random-weights takes a seed, a non-negative integer, got '" + arg + "'");
      options.randomSeed = seed;
    } else if (arg.consume_front("--arch=")) {
      options.arch = arg.str();
    } else if (arg.consume_front("--prefetch-bytes=")) {
      if (arg.getAsInteger(10, options.kernelOptions.prefetchBytes))
        return usageError("--prefetch-bytes must be a byte count, got '" + arg + "'");
    } else if (arg.consume_front("--gemv-loads=")) {
      if (arg.getAsInteger(10, options.kernelOptions.gemvLoadsInFlight))
        return usageError("--gemv-loads must be a count, got '" + arg + "'");
    } else if (arg.consume_front("--tokenizer=")) {
      if (arg.empty())
        return usageError("--tokenizer needs a folder");
      options.tokenizer = arg.str();
    } else if (arg == "--no-tokenizer") {
      options.noTokenizer = true;
    } else if (arg.consume_front("--eos=")) {
      if (!parseTokenList(arg.str(), options.eosTokens))
        return usageError("--eos must be a comma-separated list of token ids, got '" + arg + "'");
    } else if (arg == "-o") {
      if (i + 1 >= argc)
        return usageError("-o needs a file name");
      options.output = argv[++i];
    } else if (!arg.startswith("-") && options.model.empty()) {
      options.model = arg.str();
    } else {
      return usageError("unknown argument '" + arg + "'");
    }
  }
  if (options.model.empty())
    return usageError("no model given");
  // Also without a kernel: the artifact names its target, and a loader must
  // be able to tell what it is for.
  if (std::string problem = checkArchitecture(options.arch); !problem.empty())
    return usageError("--arch: " + problem);
  // Without --emit, an output named *.mk asks for the artifact.
  if (!options.emit && llvm::StringRef(options.output).endswith(".mk"))
    options.emit = EmitLevel::Mk;
  if (!options.emit)
    return usageError(options.output == "-"
                          ? "no --emit level and no -o FILE.mk: say what to produce"
                          : "no --emit level, and '" + options.output +
                                "' does not end in .mk: say what to produce with --emit=LEVEL");
  if (*options.emit == EmitLevel::Cubin && options.output == "-")
    return usageError("--emit=cubin writes a binary file: name it with -o FILE");
  if (*options.emit == EmitLevel::Mk && options.output == "-")
    return usageError("--emit=mk writes a binary file: name it with -o FILE");
  if (*options.emit != EmitLevel::Mk && !options.eosTokens.empty())
    return usageError("--eos applies to --emit=mk only");
  if (*options.emit != EmitLevel::Mk && (options.tokenizer || options.noTokenizer))
    return usageError("--tokenizer and --no-tokenizer apply to --emit=mk only");
  if (options.tokenizer && options.noTokenizer)
    return usageError("--tokenizer and --no-tokenizer contradict each other");
  if (*options.emit != EmitLevel::Mk && !options.kernel)
    return usageError("--no-kernel applies to --emit=mk only");
  if (options.step != "decode" && *options.emit != EmitLevel::Cuda &&
      *options.emit != EmitLevel::Cubin)
    return usageError("--step applies to --emit=cuda and cubin only");
  if (*options.emit != EmitLevel::Mk && options.randomSeed)
    return usageError("--random-weights applies to --emit=mk only");
  if (std::string invalid = checkKernelOptions(options.kernelOptions); !invalid.empty())
    return usageError(invalid);
  // Before compiling, which may take minutes: the input is a file, and the
  // output is not the input.
  if (std::string error = checkInputFile(options.model); !error.empty())
    return refuse(error);
  if (std::string error = checkOutput(options.output, {options.model}); !error.empty())
    return refuse(error);
  return 0;
}

llvm::Expected<CompiledModel> compileWith(mlir::MLIRContext &context,
                                          const CompileArguments &options,
                                          CompilePhases *phases = nullptr) {
  CompileOptions pipeline = options.pipeline;
  pipeline.printIrAfterAll = options.printIrAfterAll;
  pipeline.phases = phases;
  return compileToSchedule(context, options.model, pipeline);
}

// Writes `text` to `path` ("-": stdout) only once it is complete.
int writeOutput(const std::string &path, llvm::StringRef text) {
  std::string error = writeOutputFile(path, text);
  return error.empty() ? 0 : refuse(error);
}

// The one line that cubin and mk print once their file is written:
// "mkc: wrote 'a.mk' (2.1 MiB, 2200000 bytes): sm_90a, kernel (CUBIN ...),
// max context 64, 8 SMs, in 1.23 s".
void printWritten(const CompileArguments &options, const std::string &kernel,
                  const CompiledModel &compiled) {
  uint64_t bytes = 0;
  llvm::sys::fs::file_size(options.output, bytes);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - options.start)
                       .count();
  llvm::errs() << llvm::formatv("mkc: wrote '{0}' ({1:f1} MiB, {2} bytes): {3}, {4}, max context "
                                "{5}, {6} SMs, in {7:f2} s\n",
                                options.output, bytes / 1048576.0, bytes, options.arch, kernel,
                                compiled.tasks.maxContext, compiled.schedule.numSms, seconds);
}

// The levels past the IR print text about the task graph, not a module.
int emitTasks(mlir::MLIRContext &context, const CompileArguments &options) {
  auto compiled = compileWith(context, options);
  if (!compiled)
    return refuse(llvm::toString(compiled.takeError()));
  bool scheduled = *options.emit == EmitLevel::Schedule;
  std::ostringstream text;
  printSummary(text, compiled->tasks, options.pipeline.target, &compiled->dependencies,
               scheduled ? &compiled->schedule : nullptr);
  text << "\n";
  if (scheduled)
    printQueues(text, compiled->tasks, compiled->schedule);
  else
    printTaskListing(text, compiled->tasks);
  // The other graphs after decode's, each under a heading.
  auto printGraph = [&](const std::string &heading, const ScheduledGraph &other) {
    text << "\n== " << heading << " ==\n";
    printSummary(text, other.graph, options.pipeline.target, nullptr,
                 scheduled ? &other.schedule : nullptr);
    text << "\n";
    if (scheduled)
      printQueues(text, other.graph, other.schedule);
    else
      printTaskListing(text, other.graph);
  };
  for (const ScheduledGraph &rank : compiled->ranks)
    printGraph("rank " + std::to_string(rank.graph.rank) + " of " +
                   std::to_string(rank.graph.ranks),
               rank);
  for (const ScheduledGraph &step : compiled->rowSteps)
    printGraph(describeStep(step.graph), step);

  return writeOutput(options.output, text.str());
}

// ptxas's account of the megakernel, on stderr: what a change to the device
// code costs in registers and spills, for every build (bench/harness.py
// keeps it with the results).
// `step`: whose kernel, "" for decode's ("batch of 4").
std::string kernelAccount(const CompiledKernel &kernel, uint32_t numSms,
                          const std::string &step = "") {
  return llvm::formatv(
      "mkc: compiled the megakernel{9} for {0} in {1:f2} s: {2} registers, {3} bytes of shared "
      "memory ({4} dynamic), {5} bytes spilled, {6} bytes of stack frame, {7} threads x {8} "
      "CTAs{10}\n",
      kernel.arch, kernel.compileSeconds, kernel.registers, kernel.sharedBytes,
      kernel.dynamicSharedBytes, kernel.spillBytes, kernel.stackFrameBytes, kernel.threads,
      numSms, step.empty() ? std::string() : " of the " + step,
      kernel.promptKernels == 0
          ? std::string()
          : llvm::formatv("; {0} prompt kernels, {1} bytes spilled", kernel.promptKernels,
                          kernel.promptSpillBytes)
                .str())
      .str();
}

// The step --step names: "decode", "batch:B" (one of --batch) or
// "prefill" (--prefill-chunk); nullptr when the build has none such. With
// --tensor-parallel, decode is the ranks' (rank 0's graph: every rank runs
// the same kernel).
const ScheduledGraph *stepNamed(const CompiledModel &compiled, const std::string &name,
                                ScheduledGraph &decode) {
  if (name == stepName(compiled.tasks) && !compiled.ranks.empty())
    return &compiled.ranks[0];
  if (name == stepName(compiled.tasks)) {
    decode = {compiled.tasks, compiled.schedule};
    return &decode;
  }
  for (const ScheduledGraph &step : compiled.rowSteps)
    if (name == stepName(step.graph))
      return &step;
  return nullptr;
}

// The megakernel of the step --step names (decode by default): its source,
// or its CUBIN with ptxas's account on stderr.
int emitKernel(mlir::MLIRContext &context, const CompileArguments &options) {
  auto compiled = compileWith(context, options);
  if (!compiled)
    return refuse(llvm::toString(compiled.takeError()));
  ScheduledGraph decode;
  const ScheduledGraph *step = stepNamed(*compiled, options.step, decode);
  if (!step)
    return usageError("--step=" + options.step +
                      " names no step of this build (decode; batch:B with --batch=B; prefill "
                      "with --prefill-chunk)");
  std::string text;
  if (*options.emit == EmitLevel::Cuda) {
    auto source =
        megakernelSource(step->graph, step->schedule, options.arch, options.kernelOptions);
    if (!source)
      return refuse(llvm::toString(source.takeError()));
    text = std::move(*source);
  } else {
    auto kernel =
        compileMegakernel(step->graph, step->schedule, options.arch, options.kernelOptions);
    if (!kernel)
      return refuse(llvm::toString(kernel.takeError()));
    llvm::errs() << kernelAccount(*kernel, step->schedule.numSms);
    text.assign(kernel->cubin.begin(), kernel->cubin.end());
  }
  if (int status = writeOutput(options.output, text))
    return status;
  if (*options.emit == EmitLevel::Cubin)
    printWritten(options, llvm::formatv("kernel (CUBIN {0} bytes)", text.size()).str(),
                 *compiled);
  return 0;
}

// The tokenizer files (given, or beside the model) and the EOS tokens
// (--eos, else theirs) into `artifact`, every id checked against the
// model's vocabulary; 0, or the exit code.
// Without tokenizer files, what the model file says of its tokens (a GGUF
// file's tokenizer.ggml.* ids and chat template) is carried instead.
int addTokenizer(const CompileArguments &options, int64_t vocab, const EmbeddedTokens &embedded,
                 ArtifactOptions &artifact) {
  std::optional<std::string> folder = options.tokenizer;
  if (!folder && !options.noTokenizer)
    folder = tokenizerBeside(options.model);
  if (!folder && !options.noTokenizer && embedded.present) {
    artifact.eosTokens = embedded.eosTokens;
    artifact.generation.bosToken = embedded.bosToken;
    artifact.generation.chatTemplate = embedded.chatTemplate;
    artifact.generation.tokenizerSource = embedded.source;
    llvm::errs() << "mkc: special tokens from '" << embedded.source << "': EOS "
                 << (artifact.eosTokens.empty() ? std::string("none")
                                                : formatTokenList(artifact.eosTokens))
                 << ", BOS "
                 << (embedded.bosToken ? std::to_string(*embedded.bosToken) : std::string("none"))
                 << (embedded.chatTemplate.empty() ? "" : ", a chat template") << "\n";
    if (!embedded.tokenizerJson.empty()) {
      if (embedded.tokenizerTokens > static_cast<uint64_t>(vocab))
        return refuse("the tokenizer of '" + embedded.source + "' has " +
                      llvm::Twine(embedded.tokenizerTokens) + " tokens, past the model's vocabulary of " +
                      llvm::Twine(vocab));
      artifact.tokenizerJson = embedded.tokenizerJson;
      llvm::errs() << "mkc: tokenizer from '" << embedded.source << "': "
                   << embedded.tokenizerTokens << " tokens (byte-level BPE)\n";
    } else if (!embedded.noTokenizerReason.empty()) {
      llvm::errs() << "mkc: warning: '" << options.output << "' gets no tokenizer (token ids only): "
                   << embedded.noTokenizerReason << "\n";
    }
  }
  if (folder) {
    auto files = readTokenizerFiles(*folder);
    if (!files)
      return refuse(llvm::toString(files.takeError()));
    if (files->vocabSize > static_cast<uint64_t>(vocab))
      return refuse("the tokenizer in '" + *folder + "' has token ids up to " +
                    llvm::Twine(files->vocabSize - 1) + ", past the model's vocabulary of " +
                    llvm::Twine(vocab));
    artifact.eosTokens = std::move(files->eosTokens);
    artifact.generation = std::move(files->generation);
    artifact.tokenizerJson = std::move(files->tokenizerJson);
    llvm::errs() << "mkc: tokenizer from '" << *folder << "': " << files->vocabSize
                 << " tokens, EOS "
                 << (artifact.eosTokens.empty() ? std::string("none")
                                                : formatTokenList(artifact.eosTokens))
                 << (artifact.generation.chatTemplate.empty() ? "" : ", a chat template") << "\n";
  }
  if (!options.eosTokens.empty())
    artifact.eosTokens = options.eosTokens;
  if (std::string problem =
          checkSpecialTokens(artifact.eosTokens, artifact.generation.bosToken, vocab);
      !problem.empty())
    return refuse(problem);
  return 0;
}

// The kernel every rank of a tensor-parallel build runs (RANKKERNEL), into
// `artifact`, its account onto `account`; where mkc cannot link NCCL's
// device API the ranks run on the CPU executor only, which is a note. ""
// or why the kernel failed.
std::string addRankKernel(const CompiledModel &compiled, const CompileArguments &options,
                          ArtifactOptions &artifact, std::string &account) {
  const ScheduledGraph &rank = compiled.ranks[0]; // every rank's graph has the same tasks
  std::string ranks = std::to_string(compiled.ranks.size()) + " ranks";
  std::string cpuOnly = ncclDevicePart().empty() ? ncclDevicePartMissing()
                        : compiled.ranks.size() > MK_MAX_RANKS
                            ? "the kernel runs at most " + std::to_string(MK_MAX_RANKS) + " ranks"
                            : "";
  if (!cpuOnly.empty()) {
    account += "mkc: note: the " + ranks + " run on the CPU executor only: " + cpuOnly + "\n";
    return "";
  }
  auto kernel = compileMegakernel(rank.graph, rank.schedule, options.arch, options.kernelOptions);
  if (!kernel)
    return llvm::toString(kernel.takeError());
  account += kernelAccount(*kernel, rank.schedule.numSms, ranks);
  artifact.rankKernel = {static_cast<uint32_t>(ncclDevicePartVersion()), std::move(kernel->cubin)};
  return "";
}

// The artifact: the schedule, its weights in bf16, the model's facts and
// the kernel. Without NVRTC the file is still useful, on the CPU, so its
// absence is a note; a kernel that fails to compile is an error.
int emitArtifact(mlir::MLIRContext &context, const CompileArguments &options) {
  CompilePhases phases(options.kernel ? 6 : 5);
  auto compiled = compileWith(context, options, &phases);
  if (!compiled)
    return refuse(llvm::toString(compiled.takeError()));
  bool shapeOnly = compiled->imported.weights.all().empty();
  if (options.randomSeed && !shapeOnly)
    return refuse("--random-weights applies to a model whose weights have no values (a .mlir "
                  "of mk IR); '" + options.model + "' has its own");
  if (shapeOnly && !options.randomSeed)
    return refuse("'" + options.model + "' declares its weights without values: compile the "
                  "ONNX model, or pass --random-weights to fill them at random (for benchmarks)");
  if (options.randomSeed)
    compiled->imported.weights = lazyRandomWeights(compiled->tasks, *options.randomSeed);
  ArtifactOptions artifact;
  if (int status = addTokenizer(options, describeModel(compiled->tasks, compiled->schedule).vocab,
                                compiled->imported.tokens, artifact))
    return status;
  artifact.targetArch = options.arch;
  std::string account; // printed once the phase's line is done
  if (options.kernel) {
    CompilePhases::Phase phase(&phases, "kernel");
    auto nvrtc = Nvrtc::get();
    if (!nvrtc) {
      llvm::errs() << "mkc: note: '" << options.output
                   << "' has no kernel and runs on the CPU only: "
                   << llvm::toString(nvrtc.takeError()) << "\n";
    } else {
      auto kernel = compileMegakernel(compiled->tasks, compiled->schedule, options.arch, options.kernelOptions);
      if (!kernel)
        return refuse(llvm::toString(kernel.takeError()));
      account = kernelAccount(*kernel, compiled->schedule.numSms);
      artifact.cubin = std::move(kernel->cubin);
      artifact.ptx = std::move(kernel->ptx);
      artifact.kernelOptions = spellKernelOptions(options.kernelOptions);
      // A kernel for each step of rows the kernel runs (batches); the
      // others run on the CPU executor only.
      bool anyRowKernel = false;
      for (const ScheduledGraph &step : compiled->rowSteps) {
        std::vector<uint8_t> &cubin = artifact.rowKernels.emplace_back();
        if (std::string why = unsupportedStepRows(step.graph); !why.empty()) {
          account += "mkc: note: " + describeStep(step.graph) +
                     " runs on the CPU executor only: " + why + "\n";
          continue;
        }
        auto rowKernel =
            compileMegakernel(step.graph, step.schedule, options.arch, options.kernelOptions);
        if (!rowKernel)
          return refuse(llvm::toString(rowKernel.takeError()));
        account += kernelAccount(*rowKernel, step.schedule.numSms,
                                 "batch of " + std::to_string(step.graph.rows));
        cubin = std::move(rowKernel->cubin);
        anyRowKernel = true;
      }
      if (!anyRowKernel)
        artifact.rowKernels.clear();
      if (!compiled->ranks.empty())
        if (std::string problem = addRankKernel(*compiled, options, artifact, account);
            !problem.empty())
          return refuse(problem);
    }
  }
  llvm::errs() << account;
  std::string kernel =
      artifact.cubin.empty() && artifact.ptx.empty()
          ? std::string("no kernel (runs on the CPU only)")
          : llvm::formatv("kernel (CUBIN {0} bytes, PTX {1} bytes)", artifact.cubin.size(),
                          artifact.ptx.size())
                .str();
  {
    CompilePhases::Phase phase(&phases, "write");
    if (auto error = writeCompiledModel(*compiled, std::move(artifact), options.output))
      return refuse(llvm::toString(std::move(error)));
  }
  printWritten(options, kernel, *compiled);
  return 0;
}

int compile(const CompileArguments &options) {
  mlir::MLIRContext context;
  if (*options.emit == EmitLevel::Mk)
    return emitArtifact(context, options);
  if (*options.emit == EmitLevel::Cuda || *options.emit == EmitLevel::Cubin)
    return emitKernel(context, options);
  if (*options.emit >= EmitLevel::Tasks)
    return emitTasks(context, options);
  auto imported = importModel(context, options.model);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  mlir::ModuleOp module = imported->module.get();
  if (*options.emit >= EmitLevel::Fused &&
      mlir::failed(runFusionPipeline(module, options.printIrAfterAll)))
    return refuse("the fusion pipeline failed on '" + options.model + "'");

  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  os << "\n";
  return writeOutput(options.output, os.str());
}

} // namespace

int compileCommand(int argc, char **argv) {
  CompileArguments options;
  if (int status = parseArguments(argc, argv, options))
    return status;
  return compile(options);
}

} // namespace mk
