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
//   mk        the .mk artifact (compiler/artifact/WriteArtifact.h), to -o FILE,
//             with the cubin level's kernel (none with --no-kernel, or where
//             NVRTC is missing: such a file runs on the CPU only)
//
// Each level is the one before it plus one stage, so adding a stage is one
// enumerator and one `if` in compile().
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"

#include "codegen/Megakernel.h"
#include "codegen/Nvrtc.h"
#include "compiler/artifact/WriteArtifact.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/RandomWeights.h"
#include "compiler/inspect/TaskGraphText.h"
#include "frontends/onnx/DecoderImporter.h"
#include "passes/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace mk {
namespace {

enum class EmitLevel { Mlir, Fused, Tasks, Schedule, Cuda, Cubin, Mk };

constexpr const char *kUsage =
    "usage: mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule [-o OUT] "
    "[--print-ir-after-all]\n"
    "                   [--max-context=N] [--num-sms=N]\n"
    "       mkc compile MODEL.onnx --emit=cuda|cubin [-o OUT] [--arch=sm_90a] [--max-context=N] "
    "[--num-sms=N]\n"
    "       mkc compile MODEL.onnx --emit=mk -o OUT.mk [--eos=ID,...] [--arch=sm_90a] "
    "[--no-kernel]\n"
    "       mkc compile SHAPE.mlir --emit=mk -o OUT.mk --random-weights[=SEED] ... (weights\n"
    "                   declared without values, filled at random: for benchmarks)\n"
    "                   [--max-context=N] [--num-sms=N]\n"
    "kernel tuning (cuda, cubin, mk): [--prefetch-bytes=N] (L2 prefetch of each SM's next\n"
    "task's weights, default 65536, 0: none) [--gemv-loads=N] (16-byte loads in flight per\n"
    "gemv lane, 1-16, default 8)\n";

struct CompileArguments {
  std::string model;
  std::optional<EmitLevel> emit;
  std::string output = "-";
  bool printIrAfterAll = false;
  CompileOptions pipeline; // for tasks, schedule and mk
  std::vector<int64_t> eosTokens;
  std::string arch = kDefaultArch; // for cuda, cubin and mk
  KernelOptions kernelOptions;     // for cuda, cubin and mk
  bool kernel = true;              // for mk
  std::optional<uint64_t> randomSeed; // for mk: fill a shape-only model's weights
};

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

// "2,128001": token ids, each a non-negative integer.
bool parseTokenList(llvm::StringRef text, std::vector<int64_t> &tokens) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    int64_t token = 0;
    if (item.getAsInteger(10, token) || token < 0)
      return false;
    tokens.push_back(token);
  }
  return !tokens.empty();
}

// 0 when `options` is complete, else the exit code to return.
int parseArguments(int argc, char **argv, CompileArguments &options) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto shared = parseCompileOption(arg, options.pipeline);
    if (!shared)
      return refuse(llvm::toString(shared.takeError()));
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
        return refuse("unknown --emit level '" + arg +
                      "' (available: mlir, fused, tasks, schedule, cuda, cubin, mk)");
    } else if (arg == "--no-kernel") {
      options.kernel = false;
    } else if (arg == "--random-weights") {
      options.randomSeed = 987654321;
    } else if (arg.consume_front("--random-weights=")) {
      uint64_t seed = 0;
      if (arg.getAsInteger(10, seed))
        return refuse("--random-weights takes a seed, a non-negative integer, got '" + arg + "'");
      options.randomSeed = seed;
    } else if (arg.consume_front("--arch=")) {
      options.arch = arg.str();
    } else if (arg.consume_front("--prefetch-bytes=")) {
      if (arg.getAsInteger(10, options.kernelOptions.prefetchBytes))
        return refuse("--prefetch-bytes must be a byte count, got '" + arg + "'");
    } else if (arg.consume_front("--gemv-loads=")) {
      if (arg.getAsInteger(10, options.kernelOptions.gemvLoadsInFlight))
        return refuse("--gemv-loads must be a count, got '" + arg + "'");
    } else if (arg.consume_front("--eos=")) {
      if (!parseTokenList(arg, options.eosTokens))
        return refuse("--eos must be a comma-separated list of token ids, got '" + arg + "'");
    } else if (arg == "-o" && i + 1 < argc) {
      options.output = argv[++i];
    } else if (!arg.startswith("-") && options.model.empty()) {
      options.model = arg.str();
    } else {
      return refuse("unknown argument '" + arg + "'");
    }
  }
  if (options.model.empty() || !options.emit) {
    llvm::errs() << kUsage;
    return kUsageError;
  }
  if (*options.emit == EmitLevel::Cubin && options.output == "-")
    return refuse("--emit=cubin writes a binary file: name it with -o FILE");
  if (*options.emit == EmitLevel::Mk && options.output == "-")
    return refuse("--emit=mk writes a binary file: name it with -o FILE");
  if (*options.emit != EmitLevel::Mk && !options.eosTokens.empty())
    return refuse("--eos applies to --emit=mk only");
  if (*options.emit != EmitLevel::Mk && !options.kernel)
    return refuse("--no-kernel applies to --emit=mk only");
  if (*options.emit != EmitLevel::Mk && options.randomSeed)
    return refuse("--random-weights applies to --emit=mk only");
  if (std::string invalid = checkKernelOptions(options.kernelOptions); !invalid.empty())
    return refuse(invalid);
  // Before compiling, which may take minutes: the input is a file, and the
  // output is not the input.
  if (std::string error = checkInputFile(options.model); !error.empty())
    return refuse(error);
  if (std::string error = checkOutput(options.output, {options.model}); !error.empty())
    return refuse(error);
  return 0;
}

llvm::Expected<CompiledModel> compileWith(mlir::MLIRContext &context,
                                          const CompileArguments &options) {
  CompileOptions pipeline = options.pipeline;
  pipeline.printIrAfterAll = options.printIrAfterAll;
  return compileToSchedule(context, options.model, pipeline);
}

// Writes `text` to `path` ("-": stdout) only once it is complete.
int writeOutput(const std::string &path, llvm::StringRef text) {
  std::string error = writeOutputFile(path, text);
  return error.empty() ? 0 : refuse(error);
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

  return writeOutput(options.output, text.str());
}

// The megakernel: its source, or its CUBIN with ptxas's account on stderr.
int emitKernel(mlir::MLIRContext &context, const CompileArguments &options) {
  auto compiled = compileWith(context, options);
  if (!compiled)
    return refuse(llvm::toString(compiled.takeError()));
  std::string text;
  if (*options.emit == EmitLevel::Cuda) {
    auto source = megakernelSource(compiled->tasks, compiled->schedule, options.arch,
                                   options.kernelOptions);
    if (!source)
      return refuse(llvm::toString(source.takeError()));
    text = std::move(*source);
  } else {
    auto kernel = compileMegakernel(*compiled, options.arch, options.kernelOptions);
    if (!kernel)
      return refuse(llvm::toString(kernel.takeError()));
    llvm::errs() << llvm::formatv(
        "mkc: compiled the megakernel for {0} in {1:f2} s: {2} registers, {3} bytes of shared "
        "memory ({4} dynamic), {5} bytes spilled, {6} bytes of stack frame, {7} threads x {8} "
        "CTAs\n",
        kernel->arch, kernel->compileSeconds, kernel->registers, kernel->sharedBytes,
        kernel->dynamicSharedBytes, kernel->spillBytes, kernel->stackFrameBytes, kernel->threads,
        compiled->schedule.numSms);
    text.assign(kernel->cubin.begin(), kernel->cubin.end());
  }
  return writeOutput(options.output, text);
}

// The artifact: the schedule, its weights in bf16, the model's facts and
// the kernel. Without NVRTC the file is still useful, on the CPU, so its
// absence is a note; a kernel that fails to compile is an error.
int emitArtifact(mlir::MLIRContext &context, const CompileArguments &options) {
  auto compiled = compileWith(context, options);
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
    compiled->imported.weights = randomWeights(compiled->tasks, *options.randomSeed);
  ArtifactOptions artifact;
  artifact.eosTokens = options.eosTokens;
  artifact.targetArch = options.arch;
  if (options.kernel) {
    auto nvrtc = Nvrtc::get();
    if (!nvrtc) {
      llvm::errs() << "mkc: note: '" << options.output
                   << "' has no kernel and runs on the CPU only: "
                   << llvm::toString(nvrtc.takeError()) << "\n";
    } else {
      auto kernel = compileMegakernel(*compiled, options.arch, options.kernelOptions);
      if (!kernel)
        return refuse(llvm::toString(kernel.takeError()));
      artifact.cubin = std::move(kernel->cubin);
      artifact.ptx = std::move(kernel->ptx);
    }
  }
  if (auto error = writeCompiledModel(*compiled, std::move(artifact), options.output))
    return refuse(llvm::toString(std::move(error)));
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
  auto imported = importOnnxModel(context, options.model);
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
