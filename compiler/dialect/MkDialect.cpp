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

// The rotary constraints shared by mk.rotary and mk.fused_attention.
static LogicalResult verifyRotary(Operation *op, int64_t headDim, int64_t rotaryDim,
                                  DenseElementsAttr invFreq) {
  if (rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return op->emitOpError("rotary_dim ") << rotaryDim << " must be even and in (0, head_dim]";
  if (invFreq.getType().getRank() != 1)
    return op->emitOpError("inv_freq must be a 1-D tensor");
  if (invFreq.getNumElements() != rotaryDim / 2)
    return op->emitOpError("inv_freq has ") << invFreq.getNumElements()
                                            << " entries, expected rotary_dim/2 = "
                                            << rotaryDim / 2;
  // A NaN or infinite frequency turns every rotated value into NaN: the
  // model is broken, and saying so here beats NaN logits later.
  int64_t index = 0;
  for (const APFloat &frequency : invFreq.getValues<APFloat>()) {
    if (!frequency.isFinite())
      return op->emitOpError("inv_freq entry ")
             << index << " is " << frequency.convertToFloat() << ", not a finite frequency";
    ++index;
  }
  return success();
}

LogicalResult RotaryOp::verify() {
  int64_t headDim = getHeadDim();
  if (headDim <= 0 || lengthOf(getInput()) % headDim != 0)
    return emitOpError("input length ") << lengthOf(getInput())
                                        << " is not a multiple of head_dim " << headDim;
  return verifyRotary(*this, headDim, getRotaryDim(), getInvFreq());
}

// The head arithmetic shared by mk.attention and mk.fused_attention.
static LogicalResult verifyHeads(Operation *op, int64_t heads, int64_t kvHeads, int64_t headDim,
                                 Value cacheValue) {
  if (heads <= 0 || kvHeads <= 0 || headDim <= 0)
    return op->emitOpError("num_heads, num_kv_heads and head_dim must be positive");
  if (heads % kvHeads != 0)
    return op->emitOpError("num_heads ") << heads << " is not a multiple of num_kv_heads "
                                         << kvHeads;
  auto cache = cacheValue.getType().cast<KVCacheType>();
  if (cache.getNumKvHeads() != kvHeads || cache.getHeadDim() != headDim)
    return op->emitOpError("cache type does not match num_kv_heads and head_dim");
  return success();
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads(), headDim = getHeadDim();
  if (failed(verifyHeads(*this, heads, kvHeads, headDim, getCache())))
    return failure();
  if (lengthOf(getQ()) != heads * headDim || lengthOf(getResult()) != heads * headDim)
    return emitOpError("q and result must have num_heads * head_dim = ") << heads * headDim
                                                                          << " entries";
  if (lengthOf(getK()) != kvHeads * headDim || lengthOf(getV()) != kvHeads * headDim)
    return emitOpError("k and v must have num_kv_heads * head_dim = ") << kvHeads * headDim
                                                                        << " entries";
  if (auto window = getWindowAttr(); window && window.getInt() <= 0)
    return emitOpError("window must be positive, not ") << window.getInt();
  return success();
}

LogicalResult GemvOp::verify() {
  StringRef epilogue = getEpilogue();
  if (epilogue != "none" && epilogue != "silu_mul" && epilogue != "gelu_tanh_mul" &&
      epilogue != "residual")
    return emitOpError("epilogue must be \"none\", \"silu_mul\", \"gelu_tanh_mul\" or "
                       "\"residual\", got \"")
           << epilogue << "\"";
  if (getWeights().empty())
    return emitOpError("needs at least one weight");
  if (auto biases = getBiases(); biases && biases->size() != getWeights().size())
    return emitOpError("has ") << biases->size() << " biases for " << getWeights().size()
                               << " weights";
  if (getNormAttr() && !getEpsAttr())
    return emitOpError("norm needs eps");
  if (!getNormAttr() && getEpsAttr())
    return emitOpError("eps without norm");
  bool residualEpilogue = epilogue == "residual";
  if (residualEpilogue != bool(getResidual()))
    return emitOpError("has a residual operand exactly when the epilogue is \"residual\"");
  if (getResidual() && getResidual().getType() != getResult().getType())
    return emitOpError("residual must have the result's type");
  if ((epilogue == "silu_mul" || epilogue == "gelu_tanh_mul") && getWeights().size() != 2)
    return emitOpError("epilogue \"") << epilogue << "\" needs exactly two weights (gate, up), got "
                                      << getWeights().size();
  return success();
}

LogicalResult GemvOp::verifySymbolUses(SymbolTableCollection &symbols) {
  int64_t in = lengthOf(getInput());
  SmallVector<int64_t> rows;
  for (auto weight : getWeights().getAsRange<FlatSymbolRefAttr>()) {
    auto type = weightShape(*this, symbols, weight, "weight");
    if (failed(type))
      return failure();
    if (type->getRank() != 2 || type->getDimSize(1) != in) {
      auto diag = emitOpError() << "weight " << weight << " has shape [";
      llvm::interleaveComma(type->getShape(), diag);
      return diag << "], expected [rows, " << in << "]";
    }
    rows.push_back(type->getDimSize(0));
  }
  if (auto biases = getBiases())
    for (auto [bias, count] : llvm::zip(biases->getAsRange<FlatSymbolRefAttr>(), rows)) {
      auto type = weightShape(*this, symbols, bias, "bias");
      if (failed(type) || failed(expectShape(*this, bias, *type, {count}, "bias")))
        return failure();
    }
  if (auto norm = getNormAttr()) {
    auto type = weightShape(*this, symbols, norm, "norm");
    if (failed(type) || failed(expectShape(*this, norm, *type, {in}, "norm")))
      return failure();
  }
  int64_t out = lengthOf(getResult());
  if (StringRef gated = getEpilogue(); gated == "silu_mul" || gated == "gelu_tanh_mul") {
    if (rows[0] != rows[1])
      return emitOpError() << gated << " needs gate and up of equal rows, got " << rows[0]
                           << " and " << rows[1];
    if (out != rows[0])
      return emitOpError("result has ") << out << " entries, " << gated << " gives " << rows[0];
    return success();
  }
  int64_t total = 0;
  for (int64_t count : rows)
    total += count;
  if (out != total)
    return emitOpError("result has ") << out << " entries, the weights have " << total << " rows";
  return success();
}

LogicalResult SliceOp::verify() {
  int64_t offset = getOffset(), length = lengthOf(getResult()), in = lengthOf(getInput());
  if (offset < 0 || offset + length > in)
    return emitOpError("entries [") << offset << ", " << offset + length
                                    << ") are outside the input's " << in;
  return success();
}

LogicalResult FusedAttentionOp::verify() {
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads(), headDim = getHeadDim();
  if (failed(verifyHeads(*this, heads, kvHeads, headDim, getCache())))
    return failure();
  if (lengthOf(getQkv()) != (heads + 2 * kvHeads) * headDim)
    return emitOpError("qkv must have (num_heads + 2 * num_kv_heads) * head_dim = ")
           << (heads + 2 * kvHeads) * headDim << " entries";
  if (lengthOf(getResult()) != heads * headDim)
    return emitOpError("result must have num_heads * head_dim = ") << heads * headDim
                                                                   << " entries";
  if (auto window = getWindowAttr(); window && window.getInt() <= 0)
    return emitOpError("window must be positive, not ") << window.getInt();
  bool normed = getQNormAttr() || getKNormAttr();
  if (normed != bool(getNormEpsAttr()))
    return emitOpError("norm_eps is set exactly when q_norm or k_norm is");
  if (getRotaryDim() == 0) {
    if (getInvFreqAttr() || getInterleaved() || getThetaAttr())
      return emitOpError("inv_freq, interleaved and theta need a rotary_dim");
    return success();
  }
  if (!getInvFreqAttr())
    return emitOpError("rotary_dim ") << getRotaryDim() << " needs inv_freq";
  return verifyRotary(*this, headDim, getRotaryDim(), getInvFreqAttr());
}

LogicalResult FusedAttentionOp::verifySymbolUses(SymbolTableCollection &symbols) {
  int64_t headDim = getHeadDim();
  for (auto [norm, role] : {std::pair{getQNormAttr(), "q_norm"}, {getKNormAttr(), "k_norm"}}) {
    if (!norm)
      continue;
    auto type = weightShape(*this, symbols, norm, role);
    if (failed(type) || failed(expectShape(*this, norm, *type, {headDim}, role)))
      return failure();
  }
  return success();
}
