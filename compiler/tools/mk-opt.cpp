// mk-opt: parses, verifies and prints mk IR, running the fusion passes asked
// for (-mk-linear-to-gemv, ..., or all of them as -mk-fusion); the driver of
// the lit tests.
#include "compiler/dialect/MkDialect.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mk::registerMkPasses();
  mk::registerFusionPipeline();
  mlir::DialectRegistry registry;
  registry.insert<mk::MkDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "mk IR optimizer\n", registry));
}
