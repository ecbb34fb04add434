// The ONNX front end: turns a decoder-only LLM exported to ONNX (the
// Optimum-style signature: input_ids, attention_mask, position_ids,
// past_key_values.N.key/value -> logits, present.N.key/value) into mk IR.
#ifndef MKC_FRONTENDS_ONNX_DECODERIMPORTER_H
#define MKC_FRONTENDS_ONNX_DECODERIMPORTER_H

#include "frontends/ImportedModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mk {

// Reads the model at `path` and recognizes it as a decode step. Anything not
// understood is an error naming the ONNX node (name and op type) and why.
llvm::Expected<ImportedModel> importOnnxModel(mlir::MLIRContext &context, const std::string &path);

} // namespace mk

#endif
