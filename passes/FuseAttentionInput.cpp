// mk-fuse-attention-input: an mk.attention whose q and k are
// (per-head norm ->) mk.rotary of slices of one gemv result, and whose v
// is a plain slice of it, becomes mk.fused_attention on that result: the
// attention task normalizes, rotates and writes k, v into the cache itself,
// and q, k, v never exist as separate vectors. The slices must be q | k | v
// in that order and cover the gemv result exactly; q and k must be rotated
// alike at the attention's position (or neither rotated), and normalized
// with the same eps when both are. Assumes mk-concat-projections has stacked
// q, k and v.
//
// A per-head norm is an mk.head_rms_norm of the attention's head_dim, or an
// mk.rms_norm whose length is head_dim: the norm of a vector of one head,
// which is how the importer writes the k norm of a model with one KV head
// (and both norms with one query head). The two describe the same
// arithmetic, so the pass takes either where one head is normalized rather
// than canonicalizing one into the other first: turning every head-long
// mk.rms_norm into mk.head_rms_norm would also rewrite norms that
// mk-fold-rms-norm must see as plain, and the reverse still leaves the
// one-head norm as an mk.rms_norm here. What decides is the length of the
// normalized segment, never which op spells it; a norm over several heads
// at once (an mk.rms_norm longer than head_dim) is not a per-head norm and
// keeps the attention unfused.
#include "passes/PassDetail.h"

using namespace mlir;

namespace mk {
namespace {

// The per-head chain slice -> (per-head norm ->) (rotary ->) attention.
struct HeadInput {
  SliceOp slice;
  HeadNorm norm;
  RotaryOp rotary;
};

FailureOr<HeadInput> headInputOf(Value operand, AttentionOp attention) {
  HeadInput input;
  int64_t headDim = attention.getHeadDim();
  if ((input.rotary = operand.getDefiningOp<RotaryOp>())) {
    if (input.rotary.getPos() != attention.getPos() ||
        static_cast<int64_t>(input.rotary.getHeadDim()) != headDim)
      return failure();
    operand = input.rotary.getInput();
  }
  if ((input.norm = headNormOf(operand))) {
    if (input.norm.headDim != headDim)
      return failure();
    operand = input.norm.input;
  }
  if (!(input.slice = operand.getDefiningOp<SliceOp>()))
    return failure();
  return input;
}

bool rotatedAlike(RotaryOp q, RotaryOp k) {
  if (!q || !k)
    return !q && !k;
  return q.getRotaryDim() == k.getRotaryDim() && q.getInvFreq() == k.getInvFreq() &&
         q.getInterleaved() == k.getInterleaved() && q.getThetaAttr() == k.getThetaAttr();
}

int64_t lengthOf(Value vector) { return vector.getType().cast<RankedTensorType>().getDimSize(0); }

struct FusePattern : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp attention, PatternRewriter &rewriter) const override {
    auto q = headInputOf(attention.getQ(), attention);
    auto k = headInputOf(attention.getK(), attention);
    auto v = attention.getV().getDefiningOp<SliceOp>();
    if (failed(q) || failed(k) || !v)
      return rewriter.notifyMatchFailure(attention, "q, k or v is not a chain from a slice");
    Value qkv = q->slice.getInput();
    int64_t qLength = lengthOf(attention.getQ()), kvLength = lengthOf(attention.getK());
    if (!qkv.getDefiningOp<GemvOp>() || k->slice.getInput() != qkv || v.getInput() != qkv ||
        lengthOf(qkv) != qLength + 2 * kvLength || q->slice.getOffset() != 0 ||
        static_cast<int64_t>(k->slice.getOffset()) != qLength ||
        static_cast<int64_t>(v.getOffset()) != qLength + kvLength)
      return rewriter.notifyMatchFailure(attention, "q, k, v are not q | k | v of one gemv");
    if (!rotatedAlike(q->rotary, k->rotary))
      return rewriter.notifyMatchFailure(attention, "q and k are rotated differently");
    if (q->norm && k->norm && q->norm.eps != k->norm.eps)
      return rewriter.notifyMatchFailure(attention, "q and k norms have different eps");

    FlatSymbolRefAttr qNorm = q->norm ? q->norm.weight : nullptr;
    FlatSymbolRefAttr kNorm = k->norm ? k->norm.weight : nullptr;
    FloatAttr normEps = q->norm ? q->norm.eps : k->norm ? k->norm.eps : nullptr;
    RotaryOp rotary = q->rotary;
    rewriter.replaceOpWithNewOp<FusedAttentionOp>(
        attention, attention.getType(), qkv, attention.getCache(), attention.getPos(),
        attention.getNumHeadsAttr(), attention.getNumKvHeadsAttr(), attention.getHeadDimAttr(),
        attention.getScaleAttr(), qNorm, kNorm, normEps,
        rotary ? rotary.getRotaryDimAttr() : rewriter.getI64IntegerAttr(0),
        rotary ? rotary.getInvFreqAttr() : DenseElementsAttr(),
        rotary ? rotary.getInterleavedAttr() : UnitAttr(),
        rotary ? rotary.getThetaAttr() : FloatAttr(), attention.getWindowAttr());
    return success();
  }
};

struct FuseAttentionInputPass : FuseAttentionInputBase<FuseAttentionInputPass> {
  void runOnOperation() override {
    if (failed(applyPatterns<FusePattern>(getOperation())))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttentionInputPass() {
  return std::make_unique<FuseAttentionInputPass>();
}

} // namespace mk
