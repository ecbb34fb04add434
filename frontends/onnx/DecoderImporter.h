// The ONNX front end: turns a decoder-only LLM exported to ONNX (the
// Optimum-style signature: input_ids, attention_mask, position_ids,
// past_key_values.N.key/value -> logits, present.N.key/value) into mk IR.
#ifndef MKC_FRONTENDS_ONNX_DECODERIMPORTER_H
#define MKC_FRONTENDS_ONNX_DECODERIMPORTER_H

#include "core/weights/WeightTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mk {

struct ImportedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  WeightTable weights;
};

// Reads the model at `path` and recognizes it as a decode step. Anything not
// understood is an error naming the ONNX node (name and op type) and why.
llvm::Expected<ImportedModel> importOnnxModel(mlir::MLIRContext &context, const std::string &path);

} // namespace mk

#endif
