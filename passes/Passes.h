// The fusion passes of mkc (Passes.td describes each); one factory per pass,
// and registerMkPasses() to make them mk-opt options.
#ifndef MKC_PASSES_PASSES_H
#define MKC_PASSES_PASSES_H

#include "compiler/dialect/MkDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mk {

std::unique_ptr<mlir::Pass> createLinearToGemvPass();
std::unique_ptr<mlir::Pass> createConcatProjectionsPass();
std::unique_ptr<mlir::Pass> createFuseAttentionInputPass();
std::unique_ptr<mlir::Pass> createFuseSwigluPass();
std::unique_ptr<mlir::Pass> createFoldRMSNormPass();
std::unique_ptr<mlir::Pass> createFoldResidualPass();
std::unique_ptr<mlir::Pass> createPostNormAsGemvPass();

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mk

#endif
