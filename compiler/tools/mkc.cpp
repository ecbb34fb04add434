// mkc: the mk compiler driver.
//
//   mkc import MODEL.onnx                 print the recognized mk IR
//   mkc compile MODEL.onnx --emit=LEVEL   print the IR at a level of the ladder, or
//                                         write the .mk artifact (CompileCommand.cpp)
//   mkc inspect MODEL.onnx|MODEL.mk [--format=text|json|dot] [--layer N] [-o FILE]
//                                         the task graph and schedule: a summary,
//                                         JSON, or DOT (InspectCommand.cpp)
//   mkc eval MODEL.onnx --tokens 5,17,42 --logits OUT.npy [--engine=reference|fused|schedule]
//                                         teacher-forced logits, one row per token
//                                         (EvalCommand.cpp)
//   mkc --help, mkc COMMAND --help, mkc --version
//
// Every option that takes a value may be written --flag=value or --flag value.
// Exit codes: 0 success, 1 usage error, 2 the model, a file or the input was
// refused, or a write failed.
#include "compiler/tools/CommandFiles.h"
#include "compiler/tools/Commands.h"
#include "compiler/tools/Version.h"
#include "frontends/gguf/GgufFile.h"
#include "frontends/gguf/import/GgufImporter.h"
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <new>
#include <set>
#include <string>
#include <vector>

namespace {

using mk::kRefused;
using mk::kUsageError;

constexpr const char *kHelp =
    "usage: mkc COMMAND MODEL [options]\n"
    "       mkc --help | --version\n"
    "\n"
    "commands:\n"
    "  import MODEL.onnx            print the mk IR recognized in an ONNX model\n"
    "  compile MODEL --emit=LEVEL   print the model at one level of the ladder (mlir,\n"
    "                               fused, tasks, schedule, cuda), or write the kernel\n"
    "                               (cubin) or the .mk artifact (mk; the default for\n"
    "                               -o FILE.mk)\n"
    "  inspect MODEL                the task graph and schedule of an ONNX model or a\n"
    "                               .mk file, and what a .mk file holds\n"
    "  eval MODEL.onnx              teacher-forced logits of the reference interpreter,\n"
    "                               the fused IR or the schedule\n"
    "\n"
    "'mkc COMMAND --help' lists the options of each.\n"
    "Every option that takes a value may be written --flag=value or --flag value.\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model, a file or the input was\n"
    "refused, or a write failed\n";

constexpr const char *kImportHelp =
    "usage: mkc import MODEL.onnx|MODEL.gguf\n"
    "\n"
    "Prints the mk IR that the ONNX front end recognizes in the model, or that\n"
    "the GGUF front end builds from a llama.cpp file.\n"
    "\n"
    "options:\n"
    "  -h, --help   this help\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model was refused\n";

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int printHelp(const char *help) {
  std::string error = mk::writeOutputFile("-", help);
  return error.empty() ? 0 : refuse(error);
}

int importCommand(int argc, char **argv) {
  if (argc != 1 || llvm::StringRef(argv[0]).startswith("-"))
    return mk::usageError("import", kImportHelp,
                          argc == 0 ? "no model given" : "import takes one model and no options");
  std::string modelPath = argv[0];
  if (std::string error = mk::checkInputFile(modelPath); !error.empty())
    return refuse(error);
  mlir::MLIRContext context;
  auto imported = mk::looksLikeGguf(modelPath) ? mk::importGgufModel(context, modelPath)
                                               : mk::importOnnxModel(context, modelPath);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  imported->module->print(os);
  os << "\n";
  std::string error = mk::writeOutputFile("-", os.str());
  return error.empty() ? 0 : refuse(error);
}

struct Command {
  const char *name;
  int (*run)(int, char **);
  const char *help;
};

const Command kCommands[] = {{"import", importCommand, kImportHelp},
                             {"compile", mk::compileCommand, mk::kCompileHelp},
                             {"inspect", mk::inspectCommand, mk::kInspectHelp},
                             {"eval", mk::evalCommand, mk::kEvalHelp}};

// "--flag value" becomes "--flag=value" for every flag that takes a value,
// so that users may type either and each command parses one spelling. A
// value flag with nothing after it is a usage error, named here.
bool joinFlagValues(int argc, char **argv, std::vector<std::string> &joined,
                    std::string &missing) {
  static const std::set<std::string> kValueFlags = {
      "--emit",          "--arch",          "--eos",
      "--prefetch-bytes", "--gemv-loads",   "--gemv-first-weights",
      "--format",        "--layer",         "--tokens",
      "--logits",        "--engine",        "--executor",
      "--max-context",   "--num-sms",       "--kv-cache",
      "--longest-attention-chunk", "--prefill-chunk", "--tensor-parallel",
      "--batch",         "--step",          "--tokenizer",
      "--weight-l2",     "--chunk-attention", "--least-gemv-tile-bytes"};
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (kValueFlags.count(arg) || arg == "-o") {
      if (i + 1 >= argc) {
        missing = arg;
        return false;
      }
      // -o keeps its own word: commands read it as "-o FILE".
      if (arg == "-o") {
        joined.push_back(arg);
        joined.push_back(argv[++i]);
        continue;
      }
      arg += "=" + std::string(argv[++i]);
    }
    joined.push_back(arg);
  }
  return true;
}

bool isHelp(llvm::StringRef arg) { return arg == "--help" || arg == "-h"; }

int run(int argc, char **argv) {
  if (argc < 2) {
    std::fputs(kHelp, stderr);
    return kUsageError;
  }
  llvm::StringRef first = argv[1];
  if (isHelp(first) || first == "help")
    return printHelp(kHelp);
  if (first == "--version")
    return printHelp(mk::versionText().c_str());
  const Command *command = nullptr;
  for (const Command &candidate : kCommands)
    if (first == candidate.name)
      command = &candidate;
  if (!command) {
    llvm::errs() << "mkc: error: unknown command '" << first
                 << "' (available: import, compile, inspect, eval)\n"
                 << kHelp;
    return kUsageError;
  }
  for (int i = 2; i < argc; ++i)
    if (isHelp(argv[i]))
      return printHelp(command->help);

  std::vector<std::string> arguments;
  std::string missing;
  if (!joinFlagValues(argc - 2, argv + 2, arguments, missing))
    return mk::usageError(command->name, command->help, "option '" + missing + "' needs a value");
  std::vector<char *> pointers;
  for (std::string &argument : arguments)
    pointers.push_back(argument.data());
  return command->run(static_cast<int>(pointers.size()), pointers.data());
}

} // namespace

int mk::usageError(const char *command, const char *help, const llvm::Twine &message) {
  llvm::StringRef text = help;
  llvm::StringRef synopsis = text.substr(0, text.find("\n\n"));
  llvm::errs() << "mkc: error: " << message << "\n"
               << synopsis << "\n"
               << "('mkc " << command << " --help' lists every option)\n";
  return kUsageError;
}

int main(int argc, char **argv) {
  // The last guard: any allocation that a reader did not check against its
  // file ends here as an error, not as an abort.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fputs("mkc: error: out of memory\n", stderr);
    return kRefused;
  }
}
