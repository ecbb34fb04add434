// mk-concat-projections: the projections that read the same vector and feed
// the same consumer become one gemv, so the vector is loaded (and later
// normalized) once: q, k, v of an mk.attention (possibly through a per-head
// norm and mk.rotary), and gate, up of an mk.silu_mul or mk.gelu_tanh_mul. A per-head norm is
// what mk-fuse-attention-input folds: an mk.head_rms_norm of the attention's
// head_dim, or an mk.rms_norm of one head (PassDetail.h, HeadNorm). The
// stacked gemv's weights and biases are the parts' in that order, and each
// part's result is an mk.slice of it. Only plain gemvs (no norm, residual or
// epilogue) in one block are stacked, and biases only when every part has
// them. Assumes mk-linear-to-gemv has run.
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

// The gemv an attention operand comes from, looking through the per-head
// ops that sit between a projection and the attention: rotary, and norms of
// heads of `headDim` entries.
GemvOp projectionOf(Value operand, int64_t headDim) {
  while (Operation *op = operand.getDefiningOp()) {
    if (auto gemv = dyn_cast<GemvOp>(op))
      return gemv;
    if (auto rotary = dyn_cast<RotaryOp>(op))
      operand = rotary.getInput();
    else if (HeadNorm norm = headNormOf(operand); norm && norm.headDim == headDim)
      operand = norm.input;
    else
      return nullptr;
  }
  return nullptr;
}

int64_t lengthOf(Value vector) { return vector.getType().cast<RankedTensorType>().getDimSize(0); }

// Stacks `parts` (in this order) into one gemv, or fails if they cannot be.
LogicalResult stack(ArrayRef<GemvOp> parts, PatternRewriter &rewriter) {
  if (llvm::is_contained(parts, nullptr))
    return failure();
  GemvOp reference = parts.front(), first = reference;
  for (GemvOp part : parts) {
    if (!isPlainGemv(part) || part.getInput() != reference.getInput() ||
        part->getBlock() != reference->getBlock() ||
        bool(part.getBiases()) != bool(reference.getBiases()))
      return failure();
    if (part->isBeforeInBlock(first))
      first = part;
  }
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t j = i + 1; j < parts.size(); ++j)
      if (parts[i] == parts[j])
        return failure();

  SmallVector<Attribute> weights, biases;
  int64_t rows = 0;
  for (GemvOp part : parts) {
    llvm::append_range(weights, part.getWeights());
    if (auto partBiases = part.getBiases())
      llvm::append_range(biases, *partBiases);
    rows += lengthOf(part.getResult());
  }
  // Before the first part, so that the slices dominate every part's users;
  // the shared input dominates the first part.
  rewriter.setInsertionPoint(first);
  auto stacked =
      rewriter.create<GemvOp>(first.getLoc(), RankedTensorType::get({rows}, rewriter.getF32Type()),
                              first.getInput(), Value(), rewriter.getArrayAttr(weights),
                              biases.empty() ? ArrayAttr() : rewriter.getArrayAttr(biases),
                              FlatSymbolRefAttr(), FloatAttr(), StringAttr());
  // All slices first: the insertion point is the first part, which the
  // replacements erase.
  SmallVector<Value> slices;
  int64_t offset = 0;
  for (GemvOp part : parts) {
    slices.push_back(rewriter.create<SliceOp>(part.getLoc(), part.getType(), stacked,
                                              rewriter.getI64IntegerAttr(offset)));
    offset += lengthOf(part.getResult());
  }
  for (auto [part, slice] : llvm::zip(parts, slices))
    rewriter.replaceOp(part, slice);
  return success();
}

struct AttentionPattern : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp attention, PatternRewriter &rewriter) const override {
    int64_t headDim = attention.getHeadDim();
    GemvOp parts[] = {projectionOf(attention.getQ(), headDim),
                      projectionOf(attention.getK(), headDim),
                      projectionOf(attention.getV(), headDim)};
    return stack(parts, rewriter);
  }
};

// The gate and up of a gated activation (mk.silu_mul, mk.gelu_tanh_mul).
template <class GatedOp> struct GatePattern : OpRewritePattern<GatedOp> {
  using OpRewritePattern<GatedOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(GatedOp gated, PatternRewriter &rewriter) const override {
    GemvOp parts[] = {gated.getGate().template getDefiningOp<GemvOp>(),
                      gated.getUp().template getDefiningOp<GemvOp>()};
    return stack(parts, rewriter);
  }
};

struct ConcatProjectionsPass : ConcatProjectionsBase<ConcatProjectionsPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<AttentionPattern, GatePattern<SiluMulOp>,
                                GatePattern<GeluTanhMulOp>>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createConcatProjectionsPass() {
  return std::make_unique<ConcatProjectionsPass>();
}

} // namespace mk
