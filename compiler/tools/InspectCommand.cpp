// mkc inspect: shows a model's task graph and schedule — a summary (text),
// the whole graph and schedule (json), or the graph drawn (dot, one layer
// with --layer since a model is too big to draw). It compiles an ONNX model
// (or mk IR), or reads the TASKGRAPH section of a .mk artifact, checked as the
// loader checks it.
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/inspect/TaskGraphDot.h"
#include "compiler/inspect/TaskGraphJson.h"
#include "compiler/inspect/TaskGraphText.h"
#include "runtime/format/ArtifactFile.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>
#include <optional>
#include <string>

namespace mk {
namespace {

constexpr const char *kUsage =
    "usage: mkc inspect MODEL.onnx|MODEL.mk [--format=text|json|dot] [--layer N] [-o FILE]\n"
    "                   [--max-context=N] [--num-sms=N]\n";

enum class Format { Text, Json, Dot };

struct InspectArguments {
  std::string model;
  Format format = Format::Text;
  std::optional<int32_t> layer;
  std::string output;
  CompileOptions compile;
  bool compileOptionGiven = false;
};

// What is shown: a compiled model's graph, or one read from a .mk file
// (which has no dependency report).
struct Inspected {
  TaskGraph graph;
  Schedule schedule;
  TargetDescription target;
  std::optional<DependencyReport> dependencies;
};

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int usage() {
  llvm::errs() << kUsage;
  return kUsageError;
}

// 0 when `arguments` is complete, else the exit code to return.
int parseArguments(int argc, char **argv, InspectArguments &arguments) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto shared = parseCompileOption(arg, arguments.compile);
    if (!shared)
      return refuse(llvm::toString(shared.takeError()));
    if (*shared) {
      arguments.compileOptionGiven = true;
      continue;
    }
    if (arg.consume_front("--format=")) {
      if (arg == "text")
        arguments.format = Format::Text;
      else if (arg == "json")
        arguments.format = Format::Json;
      else if (arg == "dot")
        arguments.format = Format::Dot;
      else
        return refuse("unknown --format '" + arg + "' (available: text, json, dot)");
    } else if (arg.consume_front("--layer=")) {
      int32_t layer = 0;
      if (arg.getAsInteger(10, layer) || layer < -1)
        return refuse("--layer must be a layer index (or -1 for the ops outside the layers), "
                      "got '" + arg + "'");
      arguments.layer = layer;
    } else if (arg == "-o" && i + 1 < argc) {
      arguments.output = argv[++i];
    } else if (!arg.startswith("-") && arguments.model.empty()) {
      arguments.model = arg.str();
    } else {
      return refuse("unknown argument '" + arg + "'");
    }
  }
  if (arguments.model.empty())
    return usage();
  if (arguments.layer && arguments.format != Format::Dot)
    return refuse("--layer applies to --format=dot only");
  if (std::string error = checkInputFile(arguments.model); !error.empty())
    return refuse(error);
  if (std::string error = checkOutput(arguments.output.empty() ? "-" : arguments.output,
                                      {arguments.model});
      !error.empty())
    return refuse(error);
  if (llvm::StringRef(arguments.model).endswith(".mk") && arguments.compileOptionGiven)
    return refuse("--max-context and --num-sms apply when compiling; '" + arguments.model +
                  "' is compiled already");
  return 0;
}

llvm::Expected<Inspected> readModel(const InspectArguments &arguments) {
  Inspected inspected;
  if (llvm::StringRef(arguments.model).endswith(".mk")) {
    std::string error;
    auto loaded = loadArtifact(arguments.model, error);
    if (!loaded)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
    inspected.graph = std::move(loaded->artifact.graph);
    inspected.schedule = std::move(loaded->artifact.schedule);
    inspected.target.numSms = inspected.schedule.numSms;
    return std::move(inspected);
  }
  mlir::MLIRContext context;
  auto compiled = compileToSchedule(context, arguments.model, arguments.compile);
  if (!compiled)
    return compiled.takeError();
  inspected.graph = std::move(compiled->tasks);
  inspected.schedule = std::move(compiled->schedule);
  inspected.target = arguments.compile.target;
  inspected.dependencies = compiled->dependencies;
  return std::move(inspected);
}

void print(std::ostream &os, const InspectArguments &arguments, const Inspected &inspected) {
  switch (arguments.format) {
  case Format::Text:
    printSummary(os, inspected.graph, inspected.target,
                 inspected.dependencies ? &*inspected.dependencies : nullptr,
                 &inspected.schedule);
    break;
  case Format::Json:
    printJson(os, inspected.graph, &inspected.schedule);
    break;
  case Format::Dot:
    printDot(os, inspected.graph, arguments.layer);
    break;
  }
}

} // namespace

int inspectCommand(int argc, char **argv) {
  InspectArguments arguments;
  if (int status = parseArguments(argc, argv, arguments))
    return status;

  auto inspected = readModel(arguments);
  if (!inspected)
    return refuse(llvm::toString(inspected.takeError()));
  if (arguments.layer && *arguments.layer >= 0) {
    bool found = false;
    for (const Operation &op : inspected->graph.operations)
      found |= op.layer == *arguments.layer;
    if (!found)
      return refuse("the model has no layer " + llvm::Twine(*arguments.layer));
  }

  std::ostringstream text;
  print(text, arguments, *inspected);
  std::string error =
      writeOutputFile(arguments.output.empty() ? "-" : arguments.output, text.str());
  return error.empty() ? 0 : refuse(error);
}

} // namespace mk
