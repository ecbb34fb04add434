// mk-fold-residual: mk.add(x, g) or mk.add(g, x), where g is a gemv with
// epilogue "none" used by nothing else, becomes g with epilogue "residual"
// and residual operand x, so the output projections (o_proj, down_proj)
// write the residual stream directly. The new gemv takes the add's place,
// where x is known to be defined. Assumes the projections are gemvs
// (mk-linear-to-gemv).
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

struct FoldPattern : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rewriter) const override {
    for (auto [residual, summand] :
         {std::pair{add.getLhs(), add.getRhs()}, std::pair{add.getRhs(), add.getLhs()}}) {
      auto gemv = summand.getDefiningOp<GemvOp>();
      if (!gemv || gemv.getEpilogue() != "none" || !gemv->hasOneUse())
        continue;
      rewriter.replaceOpWithNewOp<GemvOp>(add, add.getType(), gemv.getInput(), residual,
                                          gemv.getWeights(), gemv.getBiasesAttr(),
                                          gemv.getNormAttr(), gemv.getEpsAttr(), "residual");
      rewriter.eraseOp(gemv);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no operand is a plain gemv used only here");
  }
};

struct FoldResidualPass : FoldResidualBase<FoldResidualPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FoldPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFoldResidualPass() { return std::make_unique<FoldResidualPass>(); }

} // namespace mk
