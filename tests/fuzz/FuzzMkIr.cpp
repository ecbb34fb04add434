// libFuzzer target: mk IR text (the `mk` dialect's parser and verifiers, as
// `mkc compile SHAPE.mlir` reads it). A module that parses and verifies is
// also lowered to the task graph and scheduled, whose own checks must refuse
// what the verifiers let through.
#include "compiler/dialect/MkDialect.h"
#include "compiler/driver/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.getOrLoadDialect<mk::MkDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  // The driver reads a path: the text that verified goes through it whole
  // (fusion, lowering, the schedule and its validation).
  static const std::string path = "/tmp/mkc-fuzz-ir-" + std::to_string(::getpid()) + ".mlir";
  if (FILE *file = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    std::abort();
  }
  mk::CompileOptions options;
  options.maxContext = 64;
  options.target.numSms = 4;
  auto compiled = mk::compileToSchedule(context, path, options);
  if (!compiled)
    llvm::consumeError(compiled.takeError());
  return 0;
}
