#include "passes/Pipeline.h"

#include "passes/Passes.h"

#include "core/weights/IdentityValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"

namespace mk {

void buildFusionPipeline(mlir::OpPassManager &pm) {
  mlir::OpPassManager &function = pm.nest<mlir::func::FuncOp>();
  function.addPass(createLinearToGemvPass());
  // Stacking wants plain gemvs, so it runs before the norms and epilogues
  // are folded in; fusing the attention input and the SwiGLU wants the
  // slices stacking leaves.
  function.addPass(createConcatProjectionsPass());
  function.addPass(createFuseAttentionInputPass());
  function.addPass(createFuseSwigluPass());
  function.addPass(createFoldRMSNormPass());
  function.addPass(createFoldResidualPass());
  pm.addPass(createPostNormAsGemvPass());
}

void addIdentityWeights(mlir::ModuleOp module, WeightTable &weights) {
  module.walk([&](WeightOp weight) {
    if (weight.getSource() != llvm::StringRef(kIdentitySource) ||
        weights.find(weight.getSymName().str()))
      return;
    auto type = weight.getType().cast<mlir::RankedTensorType>();
    Weight identity;
    identity.name = weight.getSymName().str();
    identity.shape = {type.getDimSize(0), type.getDimSize(1)};
    identity.source = identityValues(static_cast<uint64_t>(type.getDimSize(0)));
    weights.add(std::move(identity));
  });
}

mlir::LogicalResult runFusionPipeline(mlir::ModuleOp module, bool printIrAfterAll,
                                      WeightTable *weights) {
  mlir::PassManager pm(module.getContext());
  buildFusionPipeline(pm);
  if (printIrAfterAll) {
    module.getContext()->disableMultithreading();
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  if (mlir::failed(pm.run(module)))
    return mlir::failure();
  if (weights)
    addIdentityWeights(module, *weights);
  return mlir::success();
}

void registerFusionPipeline() {
  mlir::PassPipelineRegistration<>("mk-fusion", "Runs every fusion pass of mkc, in order",
                                   buildFusionPipeline);
}

} // namespace mk
