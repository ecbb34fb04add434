// mk-linear-to-gemv: every mk.linear and mk.logits becomes a one-weight
// mk.gemv, its bias kept, so that the fusion passes after it have a single
// matrix-vector op to stack, normalize and give epilogues. Assumes verified
// mk IR; it is the first pass of the fusion pipeline.
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

struct LinearPattern : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp linear, PatternRewriter &rewriter) const override {
    ArrayAttr biases;
    if (FlatSymbolRefAttr bias = linear.getBiasAttr())
      biases = rewriter.getArrayAttr({bias});
    rewriter.replaceOpWithNewOp<GemvOp>(linear, linear.getType(), linear.getInput(), Value(),
                                        rewriter.getArrayAttr({linear.getWeightAttr()}), biases,
                                        FlatSymbolRefAttr(), FloatAttr(), StringAttr());
    return success();
  }
};

struct LogitsPattern : OpRewritePattern<LogitsOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LogitsOp logits, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<GemvOp>(logits, logits.getType(), logits.getInput(), Value(),
                                        rewriter.getArrayAttr({logits.getWeightAttr()}),
                                        ArrayAttr(), FlatSymbolRefAttr(), FloatAttr(),
                                        StringAttr());
    return success();
  }
};

struct LinearToGemvPass : LinearToGemvBase<LinearToGemvPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<LinearPattern, LogitsPattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createLinearToGemvPass() { return std::make_unique<LinearToGemvPass>(); }

} // namespace mk
