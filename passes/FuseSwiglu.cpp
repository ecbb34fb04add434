// mk-fuse-swiglu: mk.silu_mul(slice(y, 0, N), slice(y, N, N)), where y is a
// gemv of two weights of N rows each (gate, up) with epilogue "none", becomes
// that gemv with epilogue "silu_mul": the gated MLP's activation is computed
// where its two inputs are, and the 2N-entry y is never stored. Assumes
// mk-concat-projections has stacked gate and up.
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

// Rows of the mk.weight `name`, or nullopt if it is not one.
Optional<int64_t> rowsOf(Operation *user, Attribute name) {
  auto weight = SymbolTable::lookupNearestSymbolFrom<WeightOp>(user, name.cast<SymbolRefAttr>());
  if (!weight)
    return llvm::None;
  return weight.getType().cast<RankedTensorType>().getDimSize(0);
}

bool isSliceAt(Value value, Value of, int64_t offset) {
  auto slice = value.getDefiningOp<SliceOp>();
  return slice && slice.getInput() == of && static_cast<int64_t>(slice.getOffset()) == offset;
}

struct FusePattern : OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluMulOp siluMul, PatternRewriter &rewriter) const override {
    auto gateSlice = siluMul.getGate().getDefiningOp<SliceOp>();
    if (!gateSlice)
      return rewriter.notifyMatchFailure(siluMul, "gate is not a slice");
    auto gemv = gateSlice.getInput().getDefiningOp<GemvOp>();
    if (!gemv || gemv.getEpilogue() != "none" || gemv.getWeights().size() != 2)
      return rewriter.notifyMatchFailure(siluMul, "gate is not sliced from a two-weight gemv");
    int64_t n = siluMul.getType().cast<RankedTensorType>().getDimSize(0);
    if (!isSliceAt(siluMul.getGate(), gemv, 0) || !isSliceAt(siluMul.getUp(), gemv, n))
      return rewriter.notifyMatchFailure(siluMul, "gate and up are not the gemv's two halves");
    for (Attribute weight : gemv.getWeights())
      if (rowsOf(gemv, weight) != n)
        return rewriter.notifyMatchFailure(siluMul, "a weight does not have N rows");
    rewriter.replaceOpWithNewOp<GemvOp>(siluMul, siluMul.getType(), gemv.getInput(), Value(),
                                        gemv.getWeights(), gemv.getBiasesAttr(), gemv.getNormAttr(),
                                        gemv.getEpsAttr(), "silu_mul");
    return success();
  }
};

struct FuseSwigluPass : FuseSwigluBase<FuseSwigluPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FusePattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseSwigluPass() { return std::make_unique<FuseSwigluPass>(); }

} // namespace mk
