// mk-fold-rms-norm: an mk.rms_norm whose every user is a gemv reading it as
// its input, without a norm of its own, is folded into those gemvs (its
// weight as `norm`, its eps) and erased; each gemv then normalizes the raw
// input itself, which a megakernel tile can do on the vector it loads anyway.
// A norm with any other user (or read as a residual) stays, since computing
// it once is then needed regardless. An mk.head_rms_norm whose head_dim is
// its whole length is the same norm (one head), so it is folded alike; one
// of several heads is not a gemv's norm and stays. Assumes the projections
// are gemvs (mk-linear-to-gemv), stacked first (mk-concat-projections wants
// no norm), and the q/k norms already in mk.fused_attention.
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

bool readsAsPlainInput(OpOperand &use) {
  auto gemv = dyn_cast<GemvOp>(use.getOwner());
  return gemv && use.getOperandNumber() == 0 && !gemv.getNormAttr();
}

// Folds the whole-vector norm `norm` (an mk.rms_norm, or an mk.head_rms_norm
// of one head) into the gemvs that read it, if they are all it has.
LogicalResult fold(HeadNorm norm, PatternRewriter &rewriter) {
  Operation *op = norm.op;
  if (op->use_empty() || !llvm::all_of(op->getUses(), readsAsPlainInput))
    return rewriter.notifyMatchFailure(op, "a user is not a gemv reading it as input");
  for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
    auto gemv = cast<GemvOp>(user);
    rewriter.updateRootInPlace(gemv, [&] {
      gemv.getInputMutable().assign(norm.input);
      gemv.setNormAttr(norm.weight);
      gemv.setEpsAttr(norm.eps);
    });
  }
  rewriter.eraseOp(op);
  return success();
}

struct FoldPattern : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp norm, PatternRewriter &rewriter) const override {
    return fold(headNormOf(norm.getResult()), rewriter);
  }
};

struct FoldOneHeadPattern : OpRewritePattern<HeadRMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(HeadRMSNormOp norm, PatternRewriter &rewriter) const override {
    HeadNorm view = headNormOf(norm.getResult());
    if (view.headDim != norm.getType().cast<RankedTensorType>().getDimSize(0))
      return rewriter.notifyMatchFailure(norm, "normalizes more than one head");
    return fold(view, rewriter);
  }
};

struct FoldRMSNormPass : FoldRMSNormBase<FoldRMSNormPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FoldPattern, FoldOneHeadPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFoldRMSNormPass() { return std::make_unique<FoldRMSNormPass>(); }

} // namespace mk
