// Fused mk IR of any decoder shape, as the fusion pipeline makes it, written
// as text for the task graph tests: weights are declared, never valued, since
// lowering needs only their shapes. scripts/fused_module.py writes the same
// IR from a config file.
#ifndef MKC_TESTS_UNIT_FUSEDMODULETEXT_H
#define MKC_TESTS_UNIT_FUSEDMODULETEXT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <string>

namespace mk::test {

struct ModelShape {
  int64_t hidden = 64, intermediate = 160, layers = 2, heads = 4, kvHeads = 2, headDim = 16;
  int64_t vocab = 256;
  bool qkvBiases = false; // Qwen2
  bool qkNorm = false;    // Qwen3
  bool tied = false;      // the lm_head is the embedding table
};

// The Llama-3.2-1B shape (bench/configs/llama-3.2-1b-shaped.json).
ModelShape llama1bShape();

std::string fusedModuleText(const ModelShape &shape);

// Parses and verifies; loads the dialects it needs. Fails the test on error.
mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context, const std::string &text);

} // namespace mk::test

#endif
