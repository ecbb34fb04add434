// mk-opt: parses, verifies and prints mk IR; the driver of the lit tests.
#include "compiler/dialect/MkDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mk::MkDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "mk IR optimizer\n", registry));
}
