// Verifiers of the mk dialect: shapes and head arithmetic are checked here so
// that every later stage can rely on them.
#include "compiler/dialect/MkDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mk;

#include "compiler/dialect/MkOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/dialect/MkOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/MkOps.cpp.inc"

void MkDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/dialect/MkOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/dialect/MkOpsTypes.cpp.inc"
      >();
}

static int64_t lengthOf(Value vector) {
  return vector.getType().cast<RankedTensorType>().getDimSize(0);
}

// Looks up the weight a symbol names, or reports why it cannot be used.
static FailureOr<RankedTensorType> weightShape(Operation *user, SymbolTableCollection &symbols,
                                               FlatSymbolRefAttr name, StringRef role) {
  Operation *symbol = symbols.lookupNearestSymbolFrom(user, name);
  if (!symbol)
    return user->emitOpError() << role << " " << name << " is not defined";
  auto weight = dyn_cast<WeightOp>(symbol);
  if (!weight)
    return user->emitOpError() << role << " " << name << " is not a mk.weight";
  return weight.getType().cast<RankedTensorType>();
}

static LogicalResult expectShape(Operation *user, FlatSymbolRefAttr name, RankedTensorType type,
                                 ArrayRef<int64_t> expected, StringRef role) {
  if (type.getShape() == expected)
    return success();
  auto diag = user->emitOpError() << role << " " << name << " has shape [";
  llvm::interleaveComma(type.getShape(), diag);
  diag << "], expected [";
  llvm::interleaveComma(expected, diag);
  return diag << "]";
}

LogicalResult KVCacheType::verify(function_ref<InFlightDiagnostic()> emitError, int64_t numKvHeads,
                                  int64_t headDim) {
  if (numKvHeads <= 0 || headDim <= 0)
    return emitError() << "kv_cache needs a positive number of KV heads and head_dim, got <"
                       << numKvHeads << ", " << headDim << ">";
  return success();
}

LogicalResult WeightOp::verify() {
  auto type = getType().dyn_cast<RankedTensorType>();
  if (!type || !type.hasStaticShape())
    return emitOpError("type must be a statically shaped tensor");
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return emitOpError("element type must be f32, f16 or bf16");
  return success();
}

LogicalResult EmbeddingOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto type = weightShape(*this, symbols, getTableAttr(), "table");
  if (failed(type))
    return failure();
  if (type->getRank() == 2 && type->getDimSize(1) == lengthOf(getResult()))
    return success();
  auto diag = emitOpError() << "table " << getTableAttr() << " has shape [";
  llvm::interleaveComma(type->getShape(), diag);
  return diag << "], expected [vocab, " << lengthOf(getResult()) << "]";
}

LogicalResult RMSNormOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto type = weightShape(*this, symbols, getWeightAttr(), "weight");
  if (failed(type))
    return failure();
  return expectShape(*this, getWeightAttr(), *type, {lengthOf(getInput())}, "weight");
}

LogicalResult HeadRMSNormOp::verifySymbolUses(SymbolTableCollection &symbols) {
  int64_t headDim = getHeadDim();
  if (headDim <= 0 || lengthOf(getInput()) % headDim != 0)
    return emitOpError("input length ") << lengthOf(getInput())
                                        << " is not a multiple of head_dim " << headDim;
  auto type = weightShape(*this, symbols, getWeightAttr(), "weight");
  if (failed(type))
    return failure();
  return expectShape(*this, getWeightAttr(), *type, {headDim}, "weight");
}

LogicalResult LinearOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto type = weightShape(*this, symbols, getWeightAttr(), "weight");
  if (failed(type))
    return failure();
  int64_t out = lengthOf(getResult()), in = lengthOf(getInput());
  if (failed(expectShape(*this, getWeightAttr(), *type, {out, in}, "weight")))
    return failure();
  if (auto bias = getBiasAttr()) {
    auto biasType = weightShape(*this, symbols, bias, "bias");
    if (failed(biasType))
      return failure();
    return expectShape(*this, bias, *biasType, {out}, "bias");
  }
  return success();
}

LogicalResult LogitsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto type = weightShape(*this, symbols, getWeightAttr(), "weight");
  if (failed(type))
    return failure();
  return expectShape(*this, getWeightAttr(), *type,
                     {lengthOf(getResult()), lengthOf(getInput())}, "weight");
}

LogicalResult RotaryOp::verify() {
  int64_t headDim = getHeadDim(), rotaryDim = getRotaryDim();
  if (headDim <= 0 || lengthOf(getInput()) % headDim != 0)
    return emitOpError("input length ") << lengthOf(getInput())
                                        << " is not a multiple of head_dim " << headDim;
  if (rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return emitOpError("rotary_dim ") << rotaryDim << " must be even and in (0, head_dim]";
  if (getInvFreq().getType().getRank() != 1)
    return emitOpError("inv_freq must be a 1-D tensor");
  if (getInvFreq().getNumElements() != rotaryDim / 2)
    return emitOpError("inv_freq has ") << getInvFreq().getNumElements()
                                        << " entries, expected rotary_dim/2 = " << rotaryDim / 2;
  return success();
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads(), headDim = getHeadDim();
  if (heads <= 0 || kvHeads <= 0 || headDim <= 0)
    return emitOpError("num_heads, num_kv_heads and head_dim must be positive");
  if (heads % kvHeads != 0)
    return emitOpError("num_heads ") << heads << " is not a multiple of num_kv_heads " << kvHeads;
  if (lengthOf(getQ()) != heads * headDim || lengthOf(getResult()) != heads * headDim)
    return emitOpError("q and result must have num_heads * head_dim = ") << heads * headDim
                                                                          << " entries";
  if (lengthOf(getK()) != kvHeads * headDim || lengthOf(getV()) != kvHeads * headDim)
    return emitOpError("k and v must have num_kv_heads * head_dim = ") << kvHeads * headDim
                                                                        << " entries";
  auto cache = getCache().getType().cast<KVCacheType>();
  if (cache.getNumKvHeads() != kvHeads || cache.getHeadDim() != headDim)
    return emitOpError("cache type does not match num_kv_heads and head_dim");
  return success();
}
