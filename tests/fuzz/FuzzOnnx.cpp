// libFuzzer target: the ONNX front end (frontends/onnx) on arbitrary bytes:
// the protobuf, the opset and attribute checks, initializers inline and in
// external data, the constant folder and the rules. Each input is written
// as a model file into a folder (MKC_FUZZ_ONNX_DIR, else a fresh one) that
// may hold the external data a seed names, so that edited external-data
// entries (location, offset, length) are read against a real file.
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

std::string modelPath;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::string folder;
  if (const char *given = std::getenv("MKC_FUZZ_ONNX_DIR")) {
    folder = given;
  } else {
    char pattern[] = "/tmp/mkc-fuzz-onnx-XXXXXX";
    if (!::mkdtemp(pattern))
      std::abort();
    folder = pattern;
  }
  modelPath = folder + "/fuzz-input-" + std::to_string(::getpid()) + ".onnx";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *file = std::fopen(modelPath.c_str(), "wb");
  if (!file)
    std::abort();
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  // One context for every input would carry one input's types and
  // attributes into the next; a context is cheap next to an import.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // The verifier's diagnostics would go to stderr on every refused input.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) {
    return mlir::success();
  });
  auto imported = mk::importOnnxModel(context, modelPath);
  if (!imported)
    llvm::consumeError(imported.takeError());
  return 0;
}
