// mkc compile: imports a model and prints its IR at one level of the
// compilation ladder, the way `toyc -emit=` does:
//
//   mlir      the mk IR as imported
//   fused     after the fusion pipeline (passes/Pipeline.h)
//   tasks     the task graph (compiler/driver/Pipeline.h): a summary, then
//             every buffer, operation, event and task
//   schedule  the static schedule: a summary, then every SM's queue
//
// Each level is the one before it plus one stage, so adding a stage is one
// enumerator and one `if` in compile().
#include "compiler/tools/Commands.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/inspect/TaskGraphText.h"
#include "frontends/onnx/DecoderImporter.h"
#include "passes/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <sstream>
#include <string>

namespace mk {
namespace {

enum class EmitLevel { Mlir, Fused, Tasks, Schedule };

constexpr const char *kUsage =
    "usage: mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule [-o OUT] "
    "[--print-ir-after-all]\n"
    "                   [--max-context=N] [--num-sms=N]\n";

struct CompileArguments {
  std::string model;
  std::optional<EmitLevel> emit;
  std::string output = "-";
  bool printIrAfterAll = false;
  CompileOptions pipeline; // for tasks and schedule
};

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
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
                         .Default(std::nullopt);
      if (!options.emit)
        return refuse("unknown --emit level '" + arg +
                      "' (available: mlir, fused, tasks, schedule)");
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
  return 0;
}

// The levels past the IR print text about the task graph, not a module.
int emitTasks(mlir::MLIRContext &context, const CompileArguments &options) {
  CompileOptions pipeline = options.pipeline;
  pipeline.printIrAfterAll = options.printIrAfterAll;
  auto compiled = compileToSchedule(context, options.model, pipeline);
  if (!compiled)
    return refuse(llvm::toString(compiled.takeError()));
  bool scheduled = *options.emit == EmitLevel::Schedule;
  std::ostringstream text;
  printSummary(text, compiled->tasks, pipeline.target, &compiled->dependencies,
               scheduled ? &compiled->schedule : nullptr);
  text << "\n";
  if (scheduled)
    printQueues(text, compiled->tasks, compiled->schedule);
  else
    printTaskListing(text, compiled->tasks);

  std::string error;
  auto output = mlir::openOutputFile(options.output, &error);
  if (!output)
    return refuse(error);
  output->os() << text.str();
  output->keep();
  return 0;
}

int compile(const CompileArguments &options) {
  mlir::MLIRContext context;
  if (*options.emit >= EmitLevel::Tasks)
    return emitTasks(context, options);
  auto imported = importOnnxModel(context, options.model);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  mlir::ModuleOp module = imported->module.get();
  if (*options.emit >= EmitLevel::Fused &&
      mlir::failed(runFusionPipeline(module, options.printIrAfterAll)))
    return refuse("the fusion pipeline failed on '" + options.model + "'");

  std::string error;
  auto output = mlir::openOutputFile(options.output, &error);
  if (!output)
    return refuse(error);
  module.print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

} // namespace

int compileCommand(int argc, char **argv) {
  CompileArguments options;
  if (int status = parseArguments(argc, argv, options))
    return status;
  return compile(options);
}

} // namespace mk
