// The mk dialect: ops and types generated from MkOps.td.
#ifndef MKC_COMPILER_DIALECT_MKDIALECT_H
#define MKC_COMPILER_DIALECT_MKDIALECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dialect/MkOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/dialect/MkOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/MkOps.h.inc"

#endif
