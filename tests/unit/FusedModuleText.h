// mk IR of any decoder shape, written as text for the tests: the fused IR the
// fusion pipeline makes, for the task graph tests, and the unfused IR the
// importer writes, for tests that run the whole pipeline on it. Both name
// the same weights, declared and never valued; lowering needs only their
// shapes. scripts/fused_module.py writes the same fused IR from a config file.
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
  bool qkvBiases = false;    // Qwen2
  bool otherBiases = false;  // o_proj, gate, up and down have biases too
  bool qkNorm = false;       // Qwen3
  bool tied = false;         // the lm_head is the embedding table
  bool rotary = true;
  int64_t rotaryDim = 0;     // rotated entries of each head; 0: all of head_dim
  bool interleaved = false;  // rotary pairs (2i, 2i+1) instead of (i, i + rotary_dim/2)
  // Unfused IR only: a q or k norm of one head (one query or one KV head) is
  // written as mk.rms_norm, as the importer does, or as mk.head_rms_norm.
  bool oneHeadNormAsRmsNorm = true;

  int64_t rotatedDims() const { return !rotary ? 0 : rotaryDim ? rotaryDim : headDim; }
};

// The Llama-3.2-1B shape (bench/configs/llama-3.2-1b-shaped.json).
ModelShape llama1bShape();

// Weights declared as bf16.
std::string fusedModuleText(const ModelShape &shape);

// mk.embedding, mk.rms_norm, mk.head_rms_norm, mk.linear, mk.rotary,
// mk.attention, mk.silu_mul, mk.add, mk.logits and mk.argmax, as imported
// from an f32 model: weights declared as f32.
std::string unfusedModuleText(const ModelShape &shape);

// Parses and verifies; loads the dialects it needs. Fails the test on error.
mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context, const std::string &text);

} // namespace mk::test

#endif
