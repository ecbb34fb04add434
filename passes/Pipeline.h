// The fusion stage of mkc: the passes of Passes.td in an order in which each
// finds what the one before produced.
#ifndef MKC_PASSES_PIPELINE_H
#define MKC_PASSES_PIPELINE_H

#include "core/weights/WeightTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mk {

// Adds the fusion passes, nested on every func.func of a module.
void buildFusionPipeline(mlir::OpPassManager &pm);

// Runs the fusion pipeline on `module`, verifying after each pass; with
// `printIrAfterAll`, prints the module to llvm::errs() after every pass
// (which turns off the context's multithreading, as module-scope printing
// requires). With `weights`, adds the values of the weights the passes
// declared (mk-post-norm-as-gemv's identities) to them.
mlir::LogicalResult runFusionPipeline(mlir::ModuleOp module, bool printIrAfterAll,
                                      WeightTable *weights = nullptr);

// The values of every identity weight `module` declares that `weights` lacks.
void addIdentityWeights(mlir::ModuleOp module, WeightTable &weights);

// Makes the pipeline available to mk-opt as -mk-fusion.
void registerFusionPipeline();

} // namespace mk

#endif
