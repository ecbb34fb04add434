// The GGUF front end: a llama.cpp file of the llama family (llama, mistral,
// qwen2, qwen3) turned into the same mk IR the ONNX front end makes of the
// equivalent model, with the weights dequantized into a WeightTable and the
// tokenizer's special tokens and chat template alongside.
#ifndef MKC_FRONTENDS_GGUF_IMPORT_GGUFIMPORTER_H
#define MKC_FRONTENDS_GGUF_IMPORT_GGUFIMPORTER_H

#include "frontends/ImportedModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mk {

// Errors name the file and the metadata key or tensor (with the offset of
// its info) that is missing, mis-typed or of the wrong shape.
llvm::Expected<ImportedModel> importGgufModel(mlir::MLIRContext &context, const std::string &path);

} // namespace mk

#endif
