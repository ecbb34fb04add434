// mk-post-norm-as-gemv: mk.add(x, rms_norm(y)) or mk.add(rms_norm(y), x),
// where the norm has no other user (a norm between a projection and its
// residual add: Gemma 3's norms after attention and MLP), becomes
//
//   mk.gemv y residual x weights [@mk.identity.N] norm @w {epilogue = "residual"}
//
// so that a Gemv's prologue norm and residual epilogue compute it, through an
// N x N identity matrix: an mk.weight whose source is "mk.identity"
// (core/weights/IdentityValues.h; runFusionPipeline gives it its values).
// One identity a width, shared by every layer: the .mk stores it once, and on
// the GPU its rows are read again every layer, mostly from L2 (Gemma 3 1B's
// width of 1152: 2.6 MB of bf16). What it costs is a matrix read where a
// norm task would read none; no such task kind exists yet.
// Runs after the other passes, so that the gemvs they fold keep their form.
#include "passes/PassDetail.h"

#include "core/weights/IdentityValues.h"

using namespace mlir;

namespace mk {
namespace {

// The module's identity weight of `n` rows, declared before `function`.
FlatSymbolRefAttr identityWeight(ModuleOp module, func::FuncOp function, int64_t n) {
  std::string name = identityWeightName(static_cast<uint64_t>(n));
  if (!module.lookupSymbol(name)) {
    OpBuilder builder(function);
    auto type = RankedTensorType::get({n, n}, builder.getF32Type());
    builder.create<WeightOp>(function.getLoc(), builder.getStringAttr(name), TypeAttr::get(type),
                             builder.getStringAttr(kIdentitySource));
  }
  return FlatSymbolRefAttr::get(module.getContext(), name);
}

struct PostNormAsGemvPass : PostNormAsGemvBase<PostNormAsGemvPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Collected first: the rewrite declares weights in the module it walks.
    llvm::SmallVector<AddOp> adds;
    module.walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds) {
      for (auto [residual, summand] :
           {std::pair{add.getLhs(), add.getRhs()}, std::pair{add.getRhs(), add.getLhs()}}) {
        auto norm = summand.getDefiningOp<RMSNormOp>();
        if (!norm || !norm->hasOneUse())
          continue;
        int64_t n = norm.getType().cast<RankedTensorType>().getDimSize(0);
        auto identity = identityWeight(module, add->getParentOfType<func::FuncOp>(), n);
        OpBuilder builder(add);
        auto gemv = builder.create<GemvOp>(
            add.getLoc(), add.getType(), norm.getInput(), residual,
            builder.getArrayAttr({identity}), ArrayAttr(), norm.getWeightAttr(),
            norm.getEpsAttr(), "residual");
        add.getResult().replaceAllUsesWith(gemv.getResult());
        add.erase();
        norm.erase();
        break;
      }
    }
  }
};

} // namespace

std::unique_ptr<Pass> createPostNormAsGemvPass() { return std::make_unique<PostNormAsGemvPass>(); }

} // namespace mk
