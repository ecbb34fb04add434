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

} // namespace mk

#endif
