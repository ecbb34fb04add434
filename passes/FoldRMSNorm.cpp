// mk-fold-rms-norm: an mk.rms_norm whose every user is a gemv reading it as
// its input, without a norm of its own, is folded into those gemvs (its
// weight as `norm`, its eps) and erased; each gemv then normalizes the raw
// input itself, which a megakernel tile can do on the vector it loads anyway.
// A norm with any other user (or read as a residual) stays, since computing
// it once is then needed regardless. Assumes the projections are gemvs
// (mk-linear-to-gemv), stacked first (mk-concat-projections wants no norm).
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

bool readsAsPlainInput(OpOperand &use) {
  auto gemv = dyn_cast<GemvOp>(use.getOwner());
  return gemv && use.getOperandNumber() == 0 && !gemv.getNormAttr();
}

struct FoldPattern : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp norm, PatternRewriter &rewriter) const override {
    if (norm->use_empty() || !llvm::all_of(norm->getUses(), readsAsPlainInput))
      return rewriter.notifyMatchFailure(norm, "a user is not a gemv reading it as input");
    for (Operation *user : llvm::make_early_inc_range(norm->getUsers())) {
      auto gemv = cast<GemvOp>(user);
      rewriter.updateRootInPlace(gemv, [&] {
        gemv.getInputMutable().assign(norm.getInput());
        gemv.setNormAttr(norm.getWeightAttr());
        gemv.setEpsAttr(norm.getEpsAttr());
      });
    }
    rewriter.eraseOp(norm);
    return success();
  }
};

struct FoldRMSNormPass : FoldRMSNormBase<FoldRMSNormPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FoldPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFoldRMSNormPass() { return std::make_unique<FoldRMSNormPass>(); }

} // namespace mk
