#include "passes/Pipeline.h"

#include "passes/Passes.h"

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
}

mlir::LogicalResult runFusionPipeline(mlir::ModuleOp module, bool printIrAfterAll) {
  mlir::PassManager pm(module.getContext());
  buildFusionPipeline(pm);
  if (printIrAfterAll) {
    module.getContext()->disableMultithreading();
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  return pm.run(module);
}

void registerFusionPipeline() {
  mlir::PassPipelineRegistration<>("mk-fusion", "Runs every fusion pass of mkc, in order",
                                   buildFusionPipeline);
}

} // namespace mk
