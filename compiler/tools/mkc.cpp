// mkc: the mk compiler driver.
//
//   mkc import MODEL.onnx                 print the recognized mk IR
//   mkc compile MODEL.onnx --emit=LEVEL   print the IR at a level of the ladder
//                                         (CompileCommand.cpp)
//   mkc inspect MODEL.onnx [--format=text|json|dot] [--layer N] [-o FILE]
//                                         the task graph and schedule: a summary,
//                                         JSON, or DOT (InspectCommand.cpp)
//   mkc eval MODEL.onnx --tokens 5,17,42 --logits OUT.npy [--engine=reference|fused]
//                                         teacher-forced logits, one row per token;
//                                         `fused` interprets the IR after fusion
//
// Exit codes: 0 success, 1 usage error, 2 the model or input was refused.
#include "compiler/dialect/MkDialect.h"
#include "compiler/interpreter/ReferenceInterpreter.h"
#include "compiler/support/Npy.h"
#include "compiler/tools/Commands.h"
#include "frontends/onnx/DecoderImporter.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using mk::kRefused;
using mk::kUsageError;

int usage() {
  llvm::errs() << "usage: mkc import MODEL.onnx\n"
                  "       mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule [-o OUT] "
                  "[--print-ir-after-all]\n"
                  "       mkc inspect MODEL.onnx [--format=text|json|dot] [--layer N] [-o FILE]\n"
                  "       mkc eval MODEL.onnx --tokens T0,T1,... --logits OUT.npy "
                  "[--engine=reference|fused]\n";
  return kUsageError;
}

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

// Parses "5,17,42"; false on anything that is not a list of non-negative integers.
bool parseTokens(const std::string &text, std::vector<int64_t> &tokens) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    if (item.empty() || item.size() > 18 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return false;
    tokens.push_back(std::stoll(item));
    start = end + 1;
  }
  return !tokens.empty();
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

int evalCommand(const std::string &modelPath, int argc, char **argv) {
  std::string tokensText, logitsPath, engine = "reference";
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0)
        return arg.substr(prefix.size());
      if (arg == flag && i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    if (auto v = value("--tokens"))
      tokensText = *v;
    else if (auto v = value("--logits"))
      logitsPath = *v;
    else if (auto v = value("--engine"))
      engine = *v;
    else
      return refuse("unknown argument '" + arg + "'");
  }
  if (tokensText.empty() || logitsPath.empty())
    return usage();
  if (engine != "reference" && engine != "fused")
    return refuse("unknown engine '" + engine + "' (available: reference, fused)");
  std::vector<int64_t> tokens;
  if (!parseTokens(tokensText, tokens))
    return refuse("--tokens must be a comma-separated list of token ids, got '" + tokensText +
                  "'");

  mlir::MLIRContext context;
  auto imported = mk::importOnnxModel(context, modelPath);
  if (!imported)
    return refuse(llvm::toString(imported.takeError()));
  // The fused engine is the same interpreter on the fused ops, so any
  // difference in the logits is a fusion pass changing the meaning.
  if (engine == "fused" && mlir::failed(mk::runFusionPipeline(imported->module.get(), false)))
    return refuse("the fusion pipeline failed on '" + modelPath + "'");
  auto interpreter = mk::ReferenceInterpreter::create(
      imported->module.get(), imported->weights, static_cast<int64_t>(tokens.size()));
  if (!interpreter)
    return refuse(llvm::toString(interpreter.takeError()));

  std::vector<float> rows;
  int64_t vocab = 0;
  for (int64_t token : tokens) {
    auto logits = (*interpreter)->step(token);
    if (!logits)
      return refuse(llvm::toString(logits.takeError()));
    vocab = static_cast<int64_t>(logits->size());
    rows.insert(rows.end(), logits->begin(), logits->end());
  }
  if (auto error = mk::writeNpy(logitsPath, rows, {static_cast<int64_t>(tokens.size()), vocab}))
    return refuse(llvm::toString(std::move(error)));
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
    return evalCommand(model, argc - 3, argv + 3);
  return usage();
}
