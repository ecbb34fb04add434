// What every front end hands the compiler: the decode step as mk IR, the
// weights' values, and what the model file itself says about its tokens
// (GGUF files carry them; ONNX models leave them to the tokenizer files).
#ifndef MKC_FRONTENDS_IMPORTEDMODEL_H
#define MKC_FRONTENDS_IMPORTEDMODEL_H

#include "core/weights/WeightTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct EmbeddedTokens {
  bool present = false;           // the model file said something about its tokens
  std::string source;             // what they came from, for messages
  std::vector<int64_t> eosTokens;
  std::optional<int64_t> bosToken;
  std::string chatTemplate;
  std::string tokenizerJson;      // an HF tokenizer.json built from the file's vocabulary, or ""
  uint64_t tokenizerTokens = 0;   // its vocabulary's size
  std::string noTokenizerReason;  // why there is none, when the file has a vocabulary
};

struct ImportedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  WeightTable weights;
  EmbeddedTokens tokens;
};

} // namespace mk

#endif
