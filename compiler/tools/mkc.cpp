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
//
// Every option that takes a value may be written --flag=value or --flag value.
// Exit codes: 0 success, 1 usage error, 2 the model or input was refused.
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>
#include <vector>

namespace {

using mk::kRefused;
using mk::kUsageError;

int usage() {
  llvm::errs() << "usage: mkc import MODEL.onnx\n"
                  "       mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule [-o OUT] "
                  "[--print-ir-after-all]\n"
                  "       mkc compile MODEL.onnx --emit=mk -o OUT.mk [--eos=ID,...]\n"
                  "       mkc inspect MODEL.onnx|MODEL.mk [--format=text|json|dot] [--layer N] "
                  "[-o FILE]\n"
                  "       mkc eval MODEL.onnx --tokens T0,T1,... --logits OUT.npy "
                  "[--engine=reference|fused|schedule]\n";
  return kUsageError;
}

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int importCommand(const std::string &modelPath) {
  if (std::string error = mk::checkInputFile(modelPath); !error.empty())
    return refuse(error);
  mlir::MLIRContext context;
  auto imported = mk::importOnnxModel(context, modelPath);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  imported->module->print(os);
  os << "\n";
  std::string error = mk::writeOutputFile("-", os.str());
  return error.empty() ? 0 : refuse(error);
}

// "--flag value" becomes "--flag=value" for every flag that takes a value,
// so that users may type either and each command parses one spelling.
std::vector<std::string> joinFlagValues(int argc, char **argv) {
  static const std::set<std::string> kValueFlags = {
      "--emit",   "--arch",   "--eos",    "--prefetch-bytes", "--gemv-loads",
      "--format", "--layer",  "--tokens", "--logits",         "--engine",
      "--executor", "--max-context", "--num-sms"};
  std::vector<std::string> joined;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (kValueFlags.count(arg) && i + 1 < argc)
      arg += "=" + std::string(argv[++i]);
    joined.push_back(arg);
  }
  return joined;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  std::vector<std::string> arguments = joinFlagValues(argc - 2, argv + 2);
  std::vector<char *> pointers;
  for (std::string &argument : arguments)
    pointers.push_back(argument.data());
  int count = static_cast<int>(pointers.size());
  std::string command = argv[1], model = argv[2];
  if (command == "compile")
    return mk::compileCommand(count, pointers.data());
  if (command == "inspect")
    return mk::inspectCommand(count, pointers.data());
  if (command == "import" && argc == 3)
    return importCommand(model);
  if (command == "eval")
    return mk::evalCommand(count, pointers.data());
  return usage();
}
