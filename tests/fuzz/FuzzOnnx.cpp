// libFuzzer target: the ONNX front end (frontends/onnx) on arbitrary bytes:
// the protobuf, the opset and attribute checks, initializers inline and in
// external data, the constant folder and the rules. Each input is written
// as a model file into a folder (MKC_FUZZ_ONNX_DIR, else a fresh one) that
// may hold the external data a seed names, so that edited external-data
// entries (location, offset, length) are read against a real file. Inputs
// of odd size import every initializer as read on demand
// (MKC_LAZY_WEIGHT_ELEMENTS=1), and every weight imported is then read, as
// writing a .mk reads it: the mapped, cast and transposed views of
// external data meet the same hostile entries as the eager reads.
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>
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
  ::setenv("MKC_LAZY_WEIGHT_ELEMENTS", size % 2 ? "1" : "1048576", 1);
  auto imported = mk::importOnnxModel(context, modelPath);
  if (!imported) {
    llvm::consumeError(imported.takeError());
    return 0;
  }
  // Every value, a piece at a time; an I/O error (a file that changed) is
  // an exception the writer turns into a message.
  constexpr uint64_t kPiece = 1 << 16;
  std::vector<float> piece(kPiece);
  for (const auto &[name, weight] : imported->weights.all()) {
    uint64_t elements = static_cast<uint64_t>(weight.numElements());
    try {
      for (uint64_t begin = 0; begin < elements; begin += kPiece)
        weight.readValues(begin, std::min(kPiece, elements - begin), piece.data());
    } catch (const std::runtime_error &) {
    }
    if (weight.source)
      weight.source->release();
  }
  return 0;
}
