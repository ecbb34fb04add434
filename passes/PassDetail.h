// What every pass file shares: the generated pass base classes and the way
// the passes run their rewrite patterns.
#ifndef MKC_PASSES_PASSDETAIL_H
#define MKC_PASSES_PASSDETAIL_H

#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mk {

#define GEN_PASS_CLASSES
#include "passes/Passes.h.inc"

// Applies `patterns` until none matches; ops left without users are erased on
// the way. Region simplification is off: a pass changes only what its
// patterns say.
inline mlir::LogicalResult applyPatterns(mlir::Operation *root,
                                         mlir::RewritePatternSet &&patterns) {
  mlir::GreedyRewriteConfig config;
  config.enableRegionSimplification = false;
  return mlir::applyPatternsAndFoldGreedily(root, std::move(patterns), config);
}

// Runs a pass's rewrite patterns on its function until none matches.
template <typename... Patterns>
mlir::LogicalResult applyPatterns(mlir::Operation *root) {
  mlir::RewritePatternSet patterns(root->getContext());
  patterns.add<Patterns...>(root->getContext());
  return applyPatterns(root, std::move(patterns));
}

// A gemv that only multiplies: no norm, no residual, epilogue "none".
inline bool isPlainGemv(GemvOp gemv) {
  return !gemv.getNormAttr() && !gemv.getResidual() && gemv.getEpilogue() == "none";
}

// An RMS norm as the attention passes read it: normalized in segments of
// `headDim` entries, each times `weight` ([headDim]). mk.head_rms_norm is
// one; so is an mk.rms_norm, which is that norm with one segment: the
// importer writes the norm of a single head (Qwen3's k norm with one KV
// head, both norms with one query head) as the plain norm. A pass that wants
// a norm of heads of dimension d asks for one with headDim == d, and so
// accepts either description.
struct HeadNorm {
  mlir::Operation *op = nullptr;
  mlir::Value input;
  mlir::FlatSymbolRefAttr weight;
  mlir::FloatAttr eps;
  int64_t headDim = 0;

  explicit operator bool() const { return op != nullptr; }
};

inline HeadNorm headNormOf(mlir::Value value) {
  if (auto norm = value.getDefiningOp<HeadRMSNormOp>())
    return {norm, norm.getInput(), norm.getWeightAttr(), norm.getEpsAttr(),
            static_cast<int64_t>(norm.getHeadDim())};
  if (auto norm = value.getDefiningOp<RMSNormOp>())
    return {norm, norm.getInput(), norm.getWeightAttr(), norm.getEpsAttr(),
            norm.getType().cast<mlir::RankedTensorType>().getDimSize(0)};
  return {};
}

} // namespace mk

#endif
