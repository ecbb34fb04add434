// mk-fuse-swiglu: mk.silu_mul(slice(y, 0, N), slice(y, N, N)), where y is a
// gemv of two weights of N rows each (gate, up) with epilogue "none", becomes
// that gemv with epilogue "silu_mul": the gated MLP's activation is computed
// where its two inputs are, and the 2N-entry y is never stored. The same for
// mk.gelu_tanh_mul (Gemma's gated MLP), epilogue "gelu_tanh_mul". Assumes
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

// GatedOp's epilogue name is the op's own: "silu_mul", "gelu_tanh_mul".
template <class GatedOp> struct FusePattern : OpRewritePattern<GatedOp> {
  using OpRewritePattern<GatedOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(GatedOp gated, PatternRewriter &rewriter) const override {
    auto gateSlice = gated.getGate().template getDefiningOp<SliceOp>();
    if (!gateSlice)
      return rewriter.notifyMatchFailure(gated, "gate is not a slice");
    auto gemv = gateSlice.getInput().template getDefiningOp<GemvOp>();
    if (!gemv || gemv.getEpilogue() != "none" || gemv.getWeights().size() != 2)
      return rewriter.notifyMatchFailure(gated, "gate is not sliced from a two-weight gemv");
    int64_t n = gated.getType().template cast<RankedTensorType>().getDimSize(0);
    if (!isSliceAt(gated.getGate(), gemv, 0) || !isSliceAt(gated.getUp(), gemv, n))
      return rewriter.notifyMatchFailure(gated, "gate and up are not the gemv's two halves");
    for (Attribute weight : gemv.getWeights())
      if (rowsOf(gemv, weight) != n)
        return rewriter.notifyMatchFailure(gated, "a weight does not have N rows");
    rewriter.replaceOpWithNewOp<GemvOp>(gated, gated.getType(), gemv.getInput(), Value(),
                                        gemv.getWeights(), gemv.getBiasesAttr(), gemv.getNormAttr(),
                                        gemv.getEpsAttr(), GatedOp::getOperationName().drop_front(3));
    return success();
  }
};

struct FuseSwigluPass : FuseSwigluBase<FuseSwigluPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FusePattern<SiluMulOp>, FusePattern<GeluTanhMulOp>>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseSwigluPass() { return std::make_unique<FuseSwigluPass>(); }

} // namespace mk
