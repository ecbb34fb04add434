// Partial kinds that turn out to be plain vectors. A scaled activation waits
// for attention (q times the softmax scale), and a slice of a vector's last
// axis waits for rotate_half; when a rule needs a plain activation instead,
// the value is built here:
// - Granite multiplies the embedding, each block's output and the logits by
//   constants, Gemma the embedding: the scale is folded into the weights of
//   the op that produced the vector, so the graph stays the Llama form the
//   passes and the kernel know (a tied table then becomes two: the lookup
//   reads one row a token, so the second costs file space, not bandwidth);
// - Phi-3 computes q | k | v and gate | up as one linear layer and slices
//   them apart: each slice becomes a linear layer of the rows it takes, the
//   Llama form again (mk-concat-projections stacks them back into one gemv).
//   A slice of any other vector becomes mk.slice.
#include "core/weights/ScaledValues.h"
#include "core/weights/SlicedValues.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

#include <cstdio>

namespace mk::onnx_import {

namespace {

// The weight an mk.weight symbol names, which the import registered.
const Weight &tableWeight(const WeightTable &weights, mlir::FlatSymbolRefAttr symbol) {
  const Weight *weight = weights.find(symbol.getValue().str());
  if (!weight)
    fail("weight '" + symbol.getValue().str() + "' is not in the weight table");
  return *weight;
}

} // namespace

mlir::FlatSymbolRefAttr GraphImporter::scaledWeight(mlir::FlatSymbolRefAttr symbol,
                                                    double factor) {
  const Weight *weight = &tableWeight(weights, symbol);
  Tensor scaled;
  scaled.shape = weight->shape;
  scaled.storage = weight->storage;
  if (weight->isLazy()) {
    scaled.lazy = scaledValues(weight->source, factor);
  } else {
    scaled.floats = weight->values;
    for (float &value : scaled.floats)
      value = static_cast<float>(value * factor);
  }
  return weightFor(scaled, false, scaledWeightName(weight->name, factor));
}

mlir::FlatSymbolRefAttr GraphImporter::weightRows(mlir::FlatSymbolRefAttr symbol, int64_t begin,
                                                  int64_t end) {
  const Weight *weight = &tableWeight(weights, symbol);
  int64_t rows = weight->shape.empty() ? 0 : weight->shape[0];
  int64_t cols = weight->shape.size() == 2 ? weight->shape[1] : 1;
  if (weight->shape.size() > 2 || begin < 0 || begin >= end || end > rows)
    fail("rows [" + std::to_string(begin) + ", " + std::to_string(end) + ") of weight '" +
         weight->name + "' are not a block of it");
  Tensor piece;
  piece.shape = weight->shape;
  piece.shape[0] = end - begin;
  piece.storage = weight->storage;
  if (weight->isLazy())
    piece.lazy = slicedValues(*weight, static_cast<uint64_t>(cols), static_cast<uint64_t>(begin),
                              0, static_cast<uint64_t>(cols));
  else
    piece.floats.assign(weight->values.begin() + begin * cols, weight->values.begin() + end * cols);
  return weightFor(piece, false,
                   rowsWeightName(weight->name, static_cast<uint64_t>(begin),
                                  static_cast<uint64_t>(end)));
}

Symbolic GraphImporter::asActivation(const Symbolic &value, const onnx::NodeProto *node) {
  bool scaled = isKind(value, SymbolicKind::ScaledActivation);
  bool sliced = isKind(value, SymbolicKind::HalfSlice);
  if (!scaled && !sliced)
    return value;
  auto refuse = [&](const std::string &reason) {
    if (node)
      failAt(*node, reason);
    fail("graph output 'logits': " + reason);
  };
  auto key = std::make_tuple(value->value.getAsOpaquePointer(), static_cast<int>(value->kind),
                             value->scale, value->lo, value->hi);
  if (auto known = plainValues.find(key); known != plainValues.end())
    return activation(known->second, value->shape);

  mlir::Value plain;
  if (sliced) {
    if (value->numElements() != value->hi - value->lo)
      return value; // every head's part of the last axis: not one piece of the vector
    auto type = vectorType(value->hi - value->lo);
    if (auto linear = value->value.getDefiningOp<LinearOp>()) {
      mlir::FlatSymbolRefAttr bias = linear.getBiasAttr();
      plain = builder.create<LinearOp>(loc, type, linear.getInput(),
                                       weightRows(linear.getWeightAttr(), value->lo, value->hi),
                                       bias ? weightRows(bias, value->lo, value->hi) : nullptr);
    } else {
      plain = builder.create<SliceOp>(loc, type, value->value,
                                      builder.getI64IntegerAttr(value->lo));
    }
  } else if (value->scale == 1.0) {
    plain = value->value;
  } else {
    double factor = value->scale;
    mlir::Operation *producer = value->value.getDefiningOp();
    mlir::Type type = value->value.getType();
    if (auto embedding = llvm::dyn_cast_or_null<EmbeddingOp>(producer)) {
      plain = builder.create<EmbeddingOp>(loc, type, scaledWeight(embedding.getTableAttr(), factor),
                                          embedding.getToken());
    } else if (auto linear = llvm::dyn_cast_or_null<LinearOp>(producer)) {
      mlir::FlatSymbolRefAttr bias = linear.getBiasAttr();
      plain = builder.create<LinearOp>(loc, type, linear.getInput(),
                                       scaledWeight(linear.getWeightAttr(), factor),
                                       bias ? scaledWeight(bias, factor) : nullptr);
    } else if (auto norm = llvm::dyn_cast_or_null<RMSNormOp>(producer)) {
      plain = builder.create<RMSNormOp>(loc, type, norm.getInput(),
                                        scaledWeight(norm.getWeightAttr(), factor),
                                        norm.getEpsAttr());
    } else if (auto norm = llvm::dyn_cast_or_null<HeadRMSNormOp>(producer)) {
      plain = builder.create<HeadRMSNormOp>(loc, type, norm.getInput(),
                                            scaledWeight(norm.getWeightAttr(), factor),
                                            norm.getEpsAttr(), norm.getHeadDimAttr());
    } else {
      std::string name = producer ? producer->getName().getStringRef().str() : "an input";
      refuse("uses the output of " + name + " times " + factorText(factor) +
             "; mkc folds such a factor only into an embedding, a linear layer or an RMSNorm");
    }
  }
  plainValues[key] = plain;
  return activation(plain, value->shape);
}

} // namespace mk::onnx_import
