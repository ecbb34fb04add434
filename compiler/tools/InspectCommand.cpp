// mkc inspect: shows a model's task graph and schedule — a summary (text),
// the whole graph and schedule (json), or the graph drawn (dot, one layer
// with --layer since a model is too big to draw). It compiles an ONNX model
// (or mk IR), or reads a .mk artifact, checked as the loader checks it, and
// then shows what the file holds too (compiler/inspect/ArtifactSummary.h).
// A .mk file is told by its magic bytes, not by its name. A GGUF file
// (llama.cpp's format, told the same way) is read and summarized: its
// metadata and tensors; it is not compiled yet, so it has no task graph.
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/inspect/ArtifactSummary.h"
#include "compiler/inspect/GgufSummary.h"
#include "compiler/inspect/TaskGraphDot.h"
#include "compiler/inspect/TaskGraphJson.h"
#include "compiler/inspect/TaskGraphText.h"
#include "core/taskgraph/TaskNames.h"
#include "frontends/gguf/GgufFile.h"
#include "runtime/format/ArtifactFile.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace mk {

const char *const kInspectHelp =
    "usage: mkc inspect MODEL.onnx|MODEL.mlir|MODEL.mk|MODEL.gguf [--format=text|json|dot]\n"
    "                   [--layer N] [--step=decode|batch:B|prefill] [-o FILE]\n"
    "                   [--max-context=N] [--num-sms=N]\n"
    "\n"
    "Shows a model's task graph and static schedule. An ONNX model (or mk IR) is\n"
    "compiled first; a .mk file (recognized by its magic bytes, whatever its name)\n"
    "is read and checked as the loader checks it, and what it holds is shown too:\n"
    "dimensions, target and kernel, EOS tokens, versions, sections, weights.\n"
    "A GGUF file (llama.cpp's format, also recognized by its magic) is read and\n"
    "checked, and summarized: its version, architecture and hyperparameters,\n"
    "tokenizer, metadata and every tensor (text or json; it is not compiled yet).\n"
    "\n"
    "options:\n"
    "  --format=text      a summary (default)\n"
    "  --format=json      the whole graph and schedule, with an \"artifact\" member\n"
    "                     for a .mk file\n"
    "  --format=dot       the graph for Graphviz\n"
    "  --layer N          with --format=dot: one layer (-1: the ops outside layers)\n"
    "  --step=S           whose graph and schedule: decode (default), batch:B (a\n"
    "                     build with --batch=B), prefill (--prefill-chunk) or\n"
    "                     rank:R (a .mk of --tensor-parallel=N: rank R's, whose\n"
    "                     tasks a trace of its GPUs names)\n"
    "  -o FILE            write to FILE instead of stdout\n"
    "  --max-context=N    when compiling: the context to compile for\n"
    "  --num-sms=N        when compiling: the SMs to schedule for\n"
    "  -h, --help         this help\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model or a file was refused\n";

namespace {

enum class Format { Text, Json, Dot };

struct InspectArguments {
  std::string model;
  Format format = Format::Text;
  std::optional<int32_t> layer;
  std::string step = "decode"; // whose graph (core/taskgraph/TaskNames.h's stepName)
  std::string output;
  CompileOptions compile;
  bool compileOptionGiven = false;
  bool artifact = false; // the model is a .mk file
  bool gguf = false;     // the model is a GGUF file
};

// What is shown: a compiled model's graph, or one read from a .mk file
// (which has no dependency report, and has the file's own facts).
struct Inspected {
  TaskGraph graph;
  Schedule schedule;
  TargetDescription target;
  std::optional<DependencyReport> dependencies;
  std::unique_ptr<LoadedArtifact> loaded;
};

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int usageError(const llvm::Twine &message) {
  return mk::usageError("inspect", kInspectHelp, message);
}

// A .mk file starts with its magic; a damaged one named *.mk is still read
// as one, so that the reader says what is wrong with it.
bool isArtifact(const std::string &path) {
  char magic[sizeof kMkMagic] = {};
  std::ifstream file(path, std::ios::binary);
  file.read(magic, sizeof magic);
  if (file.gcount() == sizeof magic && std::memcmp(magic, kMkMagic, sizeof magic) == 0)
    return true;
  return llvm::StringRef(path).endswith_insensitive(".mk");
}

constexpr const char *kCompileOnly =
    "--max-context, --num-sms, --longest-attention-chunk, --least-gemv-tile-bytes, --kv-cache, "
    "--no-logit-picks, "
    "--inline-merge, --merge-in-o-proj, --o-proj-by-head, --fuse-mlp, --prefill-chunk and "
    "--batch apply when "
    "compiling; '";

// 0 when `arguments` is complete, else the exit code to return.
int parseArguments(int argc, char **argv, InspectArguments &arguments) {
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto shared = parseCompileOption(arg, arguments.compile);
    if (!shared)
      return usageError(llvm::toString(shared.takeError()));
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
        return usageError("unknown --format '" + arg + "' (available: text, json, dot)");
    } else if (arg.consume_front("--layer=")) {
      int32_t layer = 0;
      if (arg.getAsInteger(10, layer) || layer < -1)
        return usageError("--layer must be a layer index (or -1 for the ops outside the "
                          "layers), got '" + arg + "'");
      arguments.layer = layer;
    } else if (arg.consume_front("--step=")) {
      arguments.step = arg.str();
    } else if (arg == "-o") {
      if (i + 1 >= argc)
        return usageError("-o needs a file name");
      arguments.output = argv[++i];
    } else if (!arg.startswith("-") && arguments.model.empty()) {
      arguments.model = arg.str();
    } else {
      return usageError("unknown argument '" + arg + "'");
    }
  }
  if (arguments.model.empty())
    return usageError("no model given");
  if (arguments.layer && arguments.format != Format::Dot)
    return usageError("--layer applies to --format=dot only");
  if (std::string error = checkInputFile(arguments.model); !error.empty())
    return refuse(error);
  if (std::string error = checkOutput(arguments.output.empty() ? "-" : arguments.output,
                                      {arguments.model});
      !error.empty())
    return refuse(error);
  arguments.gguf = looksLikeGguf(arguments.model);
  if (arguments.gguf) {
    if (arguments.compileOptionGiven)
      return usageError(kCompileOnly + arguments.model +
                        "' is a GGUF file, which is summarized, not compiled");
    if (arguments.format == Format::Dot)
      return usageError("--format=dot draws a task graph; '" + arguments.model +
                        "' is a GGUF file, which has none yet (text and json summarize it)");
    if (arguments.step != "decode")
      return usageError("--step picks a step's task graph; '" + arguments.model +
                        "' is a GGUF file, which has none yet");
    return 0;
  }
  arguments.artifact = isArtifact(arguments.model);
  if (arguments.artifact && arguments.compileOptionGiven)
    return usageError(kCompileOnly + arguments.model + "' is compiled already");
  return 0;
}

// Shows the step --step names instead of decode: one of `rowSteps`, or
// "rank:R", one of `ranks`.
llvm::Error pickStep(const std::string &name, const std::vector<ScheduledGraph> &rowSteps,
                     const std::vector<ScheduledGraph> &ranks, Inspected &inspected) {
  if (name == stepName(inspected.graph))
    return llvm::Error::success();
  std::string held = stepName(inspected.graph);
  std::vector<std::pair<std::string, const ScheduledGraph *>> steps;
  for (const ScheduledGraph &step : rowSteps)
    steps.push_back({stepName(step.graph), &step});
  for (size_t r = 0; r < ranks.size(); ++r)
    steps.push_back({"rank:" + std::to_string(r), &ranks[r]});
  for (const auto &[stepNamed, step] : steps) {
    if (name == stepNamed) {
      inspected.graph = step->graph;
      inspected.schedule = step->schedule;
      inspected.dependencies.reset(); // the report is decode's
      return llvm::Error::success();
    }
    held += ", " + stepNamed;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--step=" + name + " names no step of this model (it holds: " +
                                     held + ")");
}

llvm::Expected<Inspected> readModel(const InspectArguments &arguments) {
  Inspected inspected;
  if (arguments.artifact) {
    std::string error;
    inspected.loaded = loadArtifact(arguments.model, error);
    if (!inspected.loaded)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
    inspected.graph = inspected.loaded->artifact.graph;
    inspected.schedule = inspected.loaded->artifact.schedule;
    inspected.target.numSms = inspected.schedule.numSms;
    const Artifact &artifact = inspected.loaded->artifact;
    if (llvm::Error error = pickStep(arguments.step, artifact.rowSteps, artifact.ranks, inspected))
      return std::move(error);
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
  if (llvm::Error error = pickStep(arguments.step, compiled->rowSteps, compiled->ranks, inspected))
    return std::move(error);
  return std::move(inspected);
}

void print(std::ostream &os, const InspectArguments &arguments, const Inspected &inspected) {
  switch (arguments.format) {
  case Format::Text:
    if (inspected.loaded) {
      printArtifactSummary(os, *inspected.loaded);
      os << "\n";
    }
    printSummary(os, inspected.graph, inspected.target,
                 inspected.dependencies ? &*inspected.dependencies : nullptr,
                 &inspected.schedule);
    break;
  case Format::Json: {
    std::ostringstream graph;
    printJson(graph, inspected.graph, &inspected.schedule);
    std::string text = graph.str();
    // The file's facts become the document's first member.
    if (inspected.loaded && text.rfind("{\n", 0) == 0) {
      os << "{\n  \"artifact\": ";
      printArtifactJson(os, *inspected.loaded);
      os << ",\n" << text.substr(2);
    } else {
      os << text;
    }
    break;
  }
  case Format::Dot:
    printDot(os, inspected.graph, arguments.layer);
    break;
  }
}

int inspectGguf(const InspectArguments &arguments) {
  std::string error;
  std::unique_ptr<GgufFile> file = GgufFile::open(arguments.model, error);
  if (!file)
    return refuse(error);
  std::ostringstream text;
  if (arguments.format == Format::Json)
    printGgufJson(text, *file);
  else
    printGgufSummary(text, *file);
  error = writeOutputFile(arguments.output.empty() ? "-" : arguments.output, text.str());
  return error.empty() ? 0 : refuse(error);
}

} // namespace

int inspectCommand(int argc, char **argv) {
  InspectArguments arguments;
  if (int status = parseArguments(argc, argv, arguments))
    return status;
  if (arguments.gguf)
    return inspectGguf(arguments);

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
