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
// Exit codes: 0 success, 1 usage error, 2 the model or input was refused.
#include "compiler/tools/Commands.h"
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

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
  mlir::MLIRContext context;
  auto imported = mk::importOnnxModel(context, modelPath);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  imported->module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    return usage();
  std::string command = argv[1], model = argv[2];
  if (command == "compile")
    return mk::compileCommand(argc - 2, argv + 2);
  if (command == "inspect")
    return mk::inspectCommand(argc - 2, argv + 2);
  if (command == "import" && argc == 3)
    return importCommand(model);
  if (command == "eval")
    return mk::evalCommand(argc - 2, argv + 2);
  return usage();
}
