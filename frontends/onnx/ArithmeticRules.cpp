// Rules for arithmetic on activations: the pieces of RMSNorm, SiLU, rotary
// embedding and linear layers, combined as they arrive and emitted as mk ops
// once their meaning is complete. Also the standard ops that already say what
// they mean (opset 23 RMSNormalization and RotaryEmbedding, Gemm).
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

#include <cmath>

namespace mk::onnx_import {

namespace {

using Outputs = std::vector<Symbolic>;
using Kind = SymbolicKind;

std::shared_ptr<SymbolicValue> derived(const Symbolic &base, Kind kind) {
  auto value = std::make_shared<SymbolicValue>(*base);
  value->kind = kind;
  return value;
}

// Calls `match(a, b)` with the operands in both orders; commutative ops.
template <typename Match>
Symbolic eitherOrder(const Inputs &inputs, Match match) {
  if (Symbolic result = match(inputs.at(0), inputs.at(1)))
    return result;
  return match(inputs.at(1), inputs.at(0));
}

std::vector<int64_t> broadcastOrFail(const onnx::NodeProto &node, const Symbolic &a,
                                     const Symbolic &b) {
  std::vector<int64_t> shape;
  if (!broadcastShapes(a->shape, b->shape, shape))
    failAt(node, "shapes " + shapeText(a->shape) + " and " + shapeText(b->shape) +
                     " do not broadcast");
  return shape;
}

// x * w after normalization: RMSNorm of the whole vector, or per head.
Symbolic emitNorm(GraphImporter &importer, const onnx::NodeProto &node, mlir::Value input,
                  std::vector<int64_t> shape, int64_t axisSize, float eps, const Tensor &weight) {
  if (weight.numElements() != axisSize || weight.kind != ElementKind::Float)
    failAt(node, "the norm's scale has " + std::to_string(weight.numElements()) +
                     " entries, the normalized axis " + std::to_string(axisSize));
  Tensor flat = weight;
  flat.shape = {axisSize};
  auto symbol = importer.weightFor(flat, false, node.name() + ".scale");
  int64_t length = numElementsOf(shape);
  auto type = importer.vectorType(length);
  auto epsAttr = importer.builder.getF32FloatAttr(eps);
  mlir::Value result;
  if (axisSize == length)
    result = importer.builder.create<RMSNormOp>(importer.loc, type, input, symbol, epsAttr);
  else
    result = importer.builder.create<HeadRMSNormOp>(importer.loc, type, input, symbol, epsAttr,
                                                    importer.builder.getI64IntegerAttr(axisSize));
  return importer.activation(result, shape);
}

// The theta with inv[i] = theta^(-2i / rotary_dim) for every i, to six
// significant digits, or nothing when the frequencies are scaled.
std::optional<double> plainRopeBase(const std::vector<float> &inv, int64_t rotaryDim) {
  if (inv.size() < 2 || inv[1] <= 0.0f)
    return std::nullopt;
  double theta = std::pow(static_cast<double>(inv[1]), -rotaryDim / 2.0);
  double magnitude = std::pow(10.0, std::floor(std::log10(theta)) - 5);
  theta = std::round(theta / magnitude) * magnitude;
  for (size_t i = 0; i < inv.size(); ++i) {
    double expected = std::pow(theta, -2.0 * static_cast<double>(i) / rotaryDim);
    if (std::abs(inv[i] - expected) > 1e-5 * expected)
      return std::nullopt;
  }
  return theta;
}

} // namespace

// Rotary embedding of a heads x head_dim activation with the given
// frequencies (rotary_dim / 2 of them).
Symbolic emitRotary(GraphImporter &importer, const onnx::NodeProto &node, mlir::Value input,
                    std::vector<int64_t> shape, int64_t headDim, const std::vector<float> &inv,
                    bool interleaved) {
  int64_t rotaryDim = 2 * static_cast<int64_t>(inv.size());
  if (inv.empty() || rotaryDim > headDim || numElementsOf(shape) % headDim != 0)
    failAt(node, "rotary embedding over " + std::to_string(rotaryDim) +
                     " dims does not fit heads of " + std::to_string(headDim));
  auto &b = importer.builder;
  std::optional<double> theta = plainRopeBase(inv, rotaryDim);
  auto freqType = mlir::RankedTensorType::get({static_cast<int64_t>(inv.size())}, b.getF32Type());
  auto rotary = b.create<RotaryOp>(
      importer.loc, importer.vectorType(numElementsOf(shape)), input,
      importer.positionArgument(), b.getI64IntegerAttr(headDim), b.getI64IntegerAttr(rotaryDim),
      theta ? b.getF64FloatAttr(*theta) : nullptr,
      mlir::DenseFPElementsAttr::get(freqType, llvm::ArrayRef<float>(inv)),
      interleaved ? b.getUnitAttr() : nullptr);
  return importer.activation(rotary.getResult(), shape);
}

namespace {

Symbolic emitLinear(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &x,
                    const Tensor &weight, bool weightIsOutIn, const Tensor *bias) {
  if (weight.shape.size() != 2 || weight.kind != ElementKind::Float)
    failAt(node, "the weight of a linear layer must be a 2-D float tensor, it is " +
                     shapeText(weight.shape));
  int64_t in = weightIsOutIn ? weight.shape[1] : weight.shape[0];
  int64_t out = weightIsOutIn ? weight.shape[0] : weight.shape[1];
  if (x->shape.empty() || x->shape.back() != in || x->numElements() != in)
    failAt(node, "input " + shapeText(x->shape) + " does not match the weight " +
                     shapeText(weight.shape));
  auto symbol = importer.weightFor(weight, !weightIsOutIn, node.name() + ".weight");
  mlir::FlatSymbolRefAttr biasSymbol;
  if (bias) {
    if (bias->numElements() != out)
      failAt(node, "bias has " + std::to_string(bias->numElements()) + " entries, expected " +
                       std::to_string(out));
    Tensor flat = *bias;
    flat.shape = {out};
    biasSymbol = importer.weightFor(flat, false, node.name() + ".bias");
  }
  auto linear = importer.builder.create<LinearOp>(importer.loc, importer.vectorType(out),
                                                  x->value, symbol, biasSymbol);
  std::vector<int64_t> shape = x->shape;
  shape.back() = out;
  return importer.activation(linear.getResult(), shape);
}

// A linear layer's output plus a constant: the layer's bias, folded in by
// rebuilding the linear with it (the biasless one is dropped as dead).
Symbolic foldBias(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &y,
                  const Symbolic &bias) {
  if (!isKind(y, Kind::Activation) || !isKind(bias, Kind::Constant))
    return nullptr;
  auto linear = y->value.getDefiningOp<LinearOp>();
  if (!linear || linear.getBias())
    return nullptr;
  const Tensor &b = constantOf(bias);
  int64_t out = y->shape.back();
  if (b.numElements() != out || nonUnitDims(b.shape) != std::vector<int64_t>{out})
    failAt(node, "adds a constant of shape " + shapeText(b.shape) + " to a linear layer's output");
  Tensor flat = b;
  flat.shape = {out};
  auto symbol = importer.weightFor(flat, false, node.name() + ".bias");
  auto withBias = importer.builder.create<LinearOp>(importer.loc, linear.getType(),
                                                    linear.getInput(), linear.getWeightAttr(),
                                                    symbol);
  return importer.activation(withBias.getResult(), broadcastOrFail(node, y, bias));
}

Outputs add(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &given) {
  Inputs inputs = {importer.asActivation(given.at(0), &node),
                   importer.asActivation(given.at(1), &node)};
  Symbolic result = eitherOrder(inputs, [&](const Symbolic &a, const Symbolic &b) -> Symbolic {
    if (Symbolic gelu = addGeluPart(importer, node, a, b))
      return gelu;
    if (isKind(a, Kind::Position) && scalarOf(b)) {
      auto value = derived(a, Kind::Position);
      value->positionOffset += static_cast<int64_t>(*scalarOf(b));
      value->shape = broadcastOrFail(node, a, b);
      return value;
    }
    if (isKind(a, Kind::MeanSquare) && scalarOf(b)) {
      auto value = derived(a, Kind::MeanSquareEps);
      value->eps = static_cast<float>(*scalarOf(b));
      return value;
    }
    if (isKind(a, Kind::Activation) && isKind(b, Kind::Activation)) {
      std::vector<int64_t> shape = broadcastOrFail(node, a, b);
      if (a->numElements() != b->numElements() || numElementsOf(shape) != a->numElements())
        failAt(node, "adds activations of shapes " + shapeText(a->shape) + " and " +
                         shapeText(b->shape));
      auto sum = importer.builder.create<AddOp>(importer.loc, a->value.getType(), a->value,
                                                b->value);
      return importer.activation(sum.getResult(), shape);
    }
    if (Symbolic biased = foldBias(importer, node, a, b))
      return biased;
    if (isKind(a, Kind::RopeCos) && isKind(b, Kind::RopeSin) && a->value == b->value) {
      int64_t headDim = a->shape.back();
      size_t half = static_cast<size_t>(headDim / 2);
      if (a->freqs != b->freqs || a->freqs.size() != static_cast<size_t>(headDim) ||
          b->lo != static_cast<int64_t>(half))
        failAt(node, "the cos and sin terms of a rotary embedding do not match");
      if (a->scale != 1.0 || b->scale != 1.0)
        failAt(node, "rotary embedding with a scaled amplitude is not supported yet");
      std::vector<float> inv(a->freqs.begin(), a->freqs.begin() + half);
      if (!std::equal(inv.begin(), inv.end(), a->freqs.begin() + half))
        failAt(node, "rotary frequencies are not rotate_half's two equal halves");
      if (a->axisSize == headDim)
        return emitRotary(importer, node, a->value, a->shape, headDim, inv, false);
      // The first headDim entries of heads of a->axisSize: the rest join
      // by a concatenation (LayoutRules.cpp).
      auto value = derived(a, Kind::RotaryPrefix);
      value->freqs = inv;
      return value;
    }
    if (isKind(a, Kind::Scores) && isKind(b, Kind::Constant)) {
      const Tensor &mask = constantOf(b);
      auto masked = std::make_shared<SymbolicValue>(*a);
      masked->shape = broadcastOrFail(node, a, b);
      if (int64_t window = slidingWindowOf(node, mask))
        masked->window = masked->window ? std::min(masked->window, window) : window;
      return masked;
    }
    return nullptr;
  });
  if (!result)
    failAt(node, "adds values the importer does not understand");
  return {result};
}

Outputs mul(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &given) {
  // A scaled activation times a scalar stays one (the scales multiply), a
  // slice times rotary cosines is partial rotary; any other product takes
  // either as the plain vector it is.
  Inputs inputs = given;
  for (size_t i = 0; i < 2; ++i) {
    const Symbolic &other = given.at(1 - i);
    if (!(isKind(given[i], Kind::ScaledActivation) && (scalarOf(other) || isGeluPart(other))) &&
        !(isKind(given[i], Kind::HalfSlice) && isKind(other, Kind::Trig)))
      inputs[i] = importer.asActivation(given[i], &node);
  }
  // x * cos(pos * freqs), x a head or the first entries of one (x[..., :r]).
  auto ropeCos = [&](const Symbolic &x, const Symbolic &cos, int64_t headDim) -> Symbolic {
    if (x->shape.back() != static_cast<int64_t>(cos->freqs.size()) ||
        cos->shape.back() != x->shape.back())
      failAt(node, "multiplies heads of " + std::to_string(x->shape.back()) + " by " +
                       std::to_string(cos->freqs.size()) + " rotary cosines");
    auto value = derived(cos, Kind::RopeCos);
    value->value = x->value;
    value->shape = x->shape;
    value->axisSize = headDim;
    return value;
  };
  Symbolic result = eitherOrder(inputs, [&](const Symbolic &a, const Symbolic &b) -> Symbolic {
    if (Symbolic gelu = mulGeluPart(importer, node, a, b))
      return gelu;
    std::optional<double> scalar = scalarOf(b);
    switch (a->kind) {
    case Kind::Activation:
      if (isKind(b, Kind::Activation) && a->value == b->value)
        return derived(a, Kind::Square);
      if (isKind(b, Kind::InverseRms) && a->value == b->value) {
        auto value = derived(b, Kind::Normalized);
        value->shape = a->shape;
        return value;
      }
      if (isKind(b, Kind::Sigmoid) && a->value == b->value)
        return derived(a, Kind::Silu);
      if (isKind(b, Kind::Trig) && b->isCos)
        return ropeCos(a, b, a->shape.back());
      if (scalar) {
        auto value = derived(a, Kind::ScaledActivation);
        value->scale = *scalar;
        return value;
      }
      return nullptr;
    case Kind::Normalized:
      if (isKind(b, Kind::Constant))
        return emitNorm(importer, node, a->value, a->shape, a->axisSize, a->eps, constantOf(b));
      return nullptr;
    case Kind::Silu:
      if (isKind(b, Kind::Activation)) {
        if (a->numElements() != b->numElements())
          failAt(node, "gate and up projections differ in size");
        auto product = importer.builder.create<SiluMulOp>(importer.loc, a->value.getType(),
                                                          a->value, b->value);
        return importer.activation(product.getResult(), broadcastOrFail(node, a, b));
      }
      return nullptr;
    case Kind::HalfSlice:
      if (isKind(b, Kind::Trig) && b->isCos && a->lo == 0)
        return ropeCos(a, b, a->axisSize);
      return nullptr;
    case Kind::RotatedHalf:
      if (isKind(b, Kind::Trig) && !b->isCos) {
        auto value = derived(b, Kind::RopeSin);
        value->value = a->value;
        value->lo = a->lo;
        value->shape = a->shape;
        return value;
      }
      return nullptr;
    case Kind::Trig:
    case Kind::ScaledActivation:
    case Kind::KvSequence:
    case Kind::Scores:
      if (scalar) {
        auto value = derived(a, a->kind);
        value->scale *= *scalar;
        return value;
      }
      return nullptr;
    case Kind::Angles:
      if (scalar) {
        auto value = derived(a, Kind::Angles);
        for (float &f : value->freqs)
          f = static_cast<float>(f * *scalar);
        return value;
      }
      return nullptr;
    case Kind::Position:
      // pos[..., None] * inv_freq
      if (isKind(b, Kind::Constant) && constantOf(b).kind == ElementKind::Float) {
        if (a->positionOffset != 0)
          failAt(node, "rotary angles of a position other than the token's own");
        auto value = derived(a, Kind::Angles);
        value->freqs = constantOf(b).floats;
        value->shape = broadcastOrFail(node, a, b);
        if (nonUnitDims(value->shape).size() > 1)
          failAt(node, "rotary angles with more than one axis");
        return value;
      }
      return nullptr;
    default:
      return nullptr;
    }
  });
  if (!result)
    failAt(node, "multiplies values the importer does not understand");
  return {result};
}

// pos + k - k' and the like, where positions come from the mask's length.
Outputs sub(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &a = inputs.at(0), &b = inputs.at(1);
  if (isKind(a, Kind::Position) && scalarOf(b)) {
    auto value = derived(a, Kind::Position);
    value->positionOffset -= static_cast<int64_t>(*scalarOf(b));
    value->shape = broadcastOrFail(node, a, b);
    return {value};
  }
  failAt(node, "subtracts values the importer does not understand");
}

// The sum of the all-ones attention mask: the number of positions so far.
Outputs reduceSum(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &mask = inputs.at(0);
  if (!isKind(mask, Kind::AttentionMask))
    failAt(node, "understood only as the length of the attention mask");
  std::vector<int64_t> axes = intsAttribute(node, "axes");
  if (inputs.size() > 1 && inputs[1]) {
    if (!isKind(inputs[1], Kind::Constant))
      failAt(node, "axes must be constant");
    axes = constantOf(inputs[1]).asInts();
  }
  if (axes.size() != 1 || normalizeAxis(axes[0], 2) != 1)
    failAt(node, "sums the attention mask other than over its positions");
  auto value = derived(mask, Kind::Position);
  value->positionOffset = 1;
  value->shape = intAttribute(node, "keepdims", 1) ? std::vector<int64_t>{1, 1}
                                                   : std::vector<int64_t>{1};
  return {value};
}

Outputs div(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &a = inputs.at(0), &b = inputs.at(1);
  if (isKind(b, Kind::RootMeanSquare)) {
    if (isKind(a, Kind::Activation) && a->value == b->value) {
      auto value = derived(b, Kind::Normalized);
      value->shape = a->shape;
      return {value};
    }
    if (scalarOf(a) == 1.0)
      return {derived(b, Kind::InverseRms)};
  }
  std::optional<double> divisor = scalarOf(b);
  if (divisor && *divisor != 0.0 &&
      (isKind(a, Kind::Scores) || isKind(a, Kind::KvSequence) || isKind(a, Kind::Activation) ||
       isKind(a, Kind::ScaledActivation))) {
    auto value = derived(a, isKind(a, Kind::Activation) ? Kind::ScaledActivation : a->kind);
    value->scale /= *divisor;
    return {value};
  }
  failAt(node, "divides values the importer does not understand");
}

Outputs pow(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  Symbolic base = importer.asActivation(inputs.at(0), &node);
  std::optional<double> exponent = scalarOf(inputs.at(1));
  if (isKind(base, Kind::Activation) && exponent == 2.0)
    return {derived(base, Kind::Square)};
  if (isKind(base, Kind::Activation) && exponent == 3.0) { // GELU's cube (GeluRules.cpp)
    auto cube = derived(base, Kind::Cube);
    cube->scale = 1.0;
    return {cube};
  }
  if (isKind(base, Kind::MeanSquareEps) && exponent == 0.5)
    return {derived(base, Kind::RootMeanSquare)};
  if (isKind(base, Kind::MeanSquareEps) && exponent == -0.5)
    return {derived(base, Kind::InverseRms)};
  failAt(node, "a power the importer does not understand");
}

Outputs unaryRule(const onnx::NodeProto &node, const Inputs &inputs, Kind from, Kind to,
                  const char *what) {
  if (!isKind(inputs.at(0), from))
    failAt(node, std::string("understood only as ") + what);
  return {derived(inputs[0], to)};
}

Outputs sqrt(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  return unaryRule(node, inputs, Kind::MeanSquareEps, Kind::RootMeanSquare, "part of RMSNorm");
}

Outputs reciprocal(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  return unaryRule(node, inputs, Kind::RootMeanSquare, Kind::InverseRms, "part of RMSNorm");
}

Outputs neg(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  return unaryRule(node, inputs, Kind::HalfSlice, Kind::NegatedSlice, "part of rotate_half");
}

Outputs sigmoid(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  return unaryRule(node, {importer.asActivation(inputs.at(0), &node)}, Kind::Activation,
                   Kind::Sigmoid, "part of SiLU");
}

Outputs trig(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  auto value = unaryRule(node, inputs, Kind::Angles, Kind::Trig, "cos/sin of rotary angles");
  auto trigValue = std::make_shared<SymbolicValue>(*value[0]);
  trigValue->isCos = node.op_type() == "Cos";
  trigValue->scale = 1.0;
  return {trigValue};
}

Outputs reduceMean(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  std::vector<int64_t> axes = intsAttribute(node, "axes");
  if (inputs.size() > 1 && inputs[1]) {
    if (!isKind(inputs[1], Kind::Constant))
      failAt(node, "axes must be constant");
    axes = constantOf(inputs[1]).asInts();
  }
  int64_t rank = static_cast<int64_t>(input->shape.size());
  if (!isKind(input, Kind::Square) || axes.size() != 1 || normalizeAxis(axes[0], rank) != rank - 1)
    failAt(node, "understood only as the mean of squares over the last axis (RMSNorm)");
  auto value = derived(input, Kind::MeanSquare);
  value->axisSize = input->shape.back();
  if (intAttribute(node, "keepdims", 1))
    value->shape.back() = 1;
  else
    value->shape.pop_back();
  return {value};
}

Outputs matMul(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &a = inputs.at(0), &b = inputs.at(1);
  if (isKind(b, Kind::Constant))
    if (Symbolic x = importer.asActivation(a, &node); isKind(x, Kind::Activation))
      return {emitLinear(importer, node, x, constantOf(b), false, nullptr)};
  // inv_freq[:, None] @ pos[None, :]: the rotary angles.
  if (isKind(a, Kind::Constant) && isKind(b, Kind::Position) && !a->shape.empty() &&
      a->shape.back() == 1) {
    if (b->positionOffset != 0)
      failAt(node, "rotary angles of a position other than the token's own");
    auto value = derived(b, Kind::Angles);
    value->freqs = constantOf(a).floats;
    value->shape = a->shape;
    if (nonUnitDims(value->shape).size() > 1)
      failAt(node, "rotary angles with more than one axis");
    return {value};
  }
  return attentionMatMul(importer, node, inputs);
}

Outputs gemm(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &given) {
  Inputs inputs = given;
  inputs.at(0) = importer.asActivation(given.at(0), &node);
  if (intAttribute(node, "transA", 0) || floatAttribute(node, "alpha", 1.0f) != 1.0f ||
      floatAttribute(node, "beta", 1.0f) != 1.0f || !isKind(inputs.at(0), Kind::Activation) ||
      !isKind(inputs.at(1), Kind::Constant) ||
      (inputs.size() > 2 && inputs[2] && !isKind(inputs[2], Kind::Constant)))
    failAt(node, "understood only as x @ W (+ b) with constant W and b");
  const Tensor *bias = inputs.size() > 2 && inputs[2] ? inputs[2]->constant.get() : nullptr;
  return {emitLinear(importer, node, inputs[0], constantOf(inputs[1]),
                     intAttribute(node, "transB", 0) != 0, bias)};
}

Outputs rmsNormalization(GraphImporter &importer, const onnx::NodeProto &node,
                         const Inputs &inputs) {
  Symbolic x = importer.asActivation(inputs.at(0), &node);
  int64_t rank = static_cast<int64_t>(x->shape.size());
  if (!isKind(x, Kind::Activation) || !isKind(inputs.at(1), Kind::Constant) ||
      normalizeAxis(intAttribute(node, "axis", -1), rank) != rank - 1)
    failAt(node, "understood only as RMS normalization of an activation's last axis with a "
                 "constant scale");
  Symbolic normalized = emitNorm(importer, node, x->value, x->shape, x->shape.back(),
                                 floatAttribute(node, "epsilon", 1e-5f), constantOf(inputs[1]));
  return {normalized, nullptr, nullptr};
}

// com.microsoft SkipSimplifiedLayerNormalization: RMSNorm(input + skip).
Outputs skipRmsNormalization(GraphImporter &importer, const onnx::NodeProto &node,
                             const Inputs &inputs) {
  Symbolic x = importer.asActivation(inputs.at(0), &node);
  Symbolic skip = importer.asActivation(inputs.at(1), &node);
  if (!isKind(x, Kind::Activation) || !isKind(skip, Kind::Activation) ||
      !isKind(inputs.at(2), Kind::Constant) || (inputs.size() > 3 && inputs[3]))
    failAt(node, "understood only as RMSNorm(input + skip) with a constant scale and no bias");
  auto sum = importer.builder.create<AddOp>(importer.loc, x->value.getType(), x->value,
                                            skip->value);
  Symbolic summed = importer.activation(sum.getResult(), x->shape);
  Symbolic normalized = emitNorm(importer, node, sum.getResult(), x->shape, x->shape.back(),
                                 floatAttribute(node, "epsilon", 1e-5f), constantOf(inputs[2]));
  return {normalized, nullptr, nullptr, summed};
}

} // namespace

// Frequencies from cos/sin tables indexed by position: the angle at
// position 1 is the frequency itself.
std::vector<float> freqsFromTables(const onnx::NodeProto &node, const Tensor &cos,
                                   const Tensor &sin) {
  if (cos.shape.size() != 2 || cos.shape != sin.shape || cos.shape[0] < 2)
    failAt(node, "cos/sin caches must be [positions, rotary_dim / 2] tables");
  std::vector<float> freqs(cos.shape[1]);
  for (int64_t i = 0; i < cos.shape[1]; ++i)
    freqs[i] = static_cast<float>(std::atan2(sin.floats[cos.shape[1] + i],
                                             cos.floats[cos.shape[1] + i]));
  return freqs;
}

namespace {

// ONNX RotaryEmbedding (opset 23) and com.microsoft RotaryEmbedding.
Outputs rotaryEmbedding(GraphImporter &importer, const onnx::NodeProto &node,
                        const Inputs &inputs) {
  bool microsoft = node.domain() == "com.microsoft";
  const Symbolic &x = inputs.at(0);
  const Symbolic &cos = inputs.at(microsoft ? 2 : 1), &sin = inputs.at(microsoft ? 3 : 2);
  const Symbolic positions = microsoft ? inputs.at(1) : (inputs.size() > 3 ? inputs[3] : nullptr);
  // The first entries of each head (x[..., :r]): partial rotary, the rest
  // of the head joining by a concatenation.
  bool headPrefix = isKind(x, Kind::HalfSlice) && x->lo == 0;
  if (!isKind(x, Kind::Activation) && !headPrefix)
    failAt(node, "rotates something other than an activation");
  std::vector<float> freqs;
  if (isKind(cos, Kind::Trig) && isKind(sin, Kind::Trig) && cos->isCos && !sin->isCos &&
      cos->freqs == sin->freqs && !positions) {
    if (cos->scale != 1.0 || sin->scale != 1.0)
      failAt(node, "rotary embedding with a scaled amplitude is not supported yet");
    freqs = cos->freqs;
  } else if (isKind(cos, Kind::Constant) && isKind(sin, Kind::Constant) &&
             isKind(positions, Kind::Position)) {
    freqs = freqsFromTables(node, constantOf(cos), constantOf(sin));
  } else {
    failAt(node, "cos/sin inputs are neither cos/sin of position * frequencies nor constant "
                 "tables indexed by position_ids");
  }
  int64_t heads = intAttribute(node, "num_heads", 0);
  int64_t headDim = x->shape.size() == 4 ? x->shape[3]
                    : heads > 0          ? x->numElements() / heads
                                         : 2 * static_cast<int64_t>(freqs.size());
  int64_t rotaryDim = intAttribute(node, "rotary_embedding_dim", 0);
  if (rotaryDim != 0 && rotaryDim != 2 * static_cast<int64_t>(freqs.size()))
    failAt(node, "rotary_embedding_dim does not match the cos/sin caches");
  bool interleaved = intAttribute(node, "interleaved", 0) != 0;
  if (headPrefix) {
    if (interleaved || x->shape.back() != 2 * static_cast<int64_t>(freqs.size()))
      failAt(node, "rotates the first " + std::to_string(x->shape.back()) + " entries of heads " +
                       "of " + std::to_string(x->axisSize) + " with " +
                       std::to_string(freqs.size()) + " frequencies" +
                       (interleaved ? ", interleaved" : ""));
    auto value = derived(x, Kind::RotaryPrefix);
    value->freqs = freqs;
    return {value};
  }
  return {emitRotary(importer, node, x->value, x->shape, headDim, freqs, interleaved)};
}

} // namespace

void addArithmeticRules(std::map<std::string, Rule> &rules) {
  rules["Add"] = add;
  rules["Mul"] = mul;
  rules["Sub"] = sub;
  rules["ReduceSum"] = reduceSum;
  rules["Div"] = div;
  rules["Pow"] = pow;
  rules["Sqrt"] = sqrt;
  rules["Reciprocal"] = reciprocal;
  rules["Neg"] = neg;
  rules["Sigmoid"] = sigmoid;
  rules["Cos"] = trig;
  rules["Sin"] = trig;
  rules["ReduceMean"] = reduceMean;
  rules["MatMul"] = matMul;
  rules["Gemm"] = gemm;
  rules["RMSNormalization"] = rmsNormalization;
  rules["RotaryEmbedding"] = rotaryEmbedding;
  rules["SimplifiedLayerNormalization"] = rmsNormalization;
  rules["com.microsoft:SimplifiedLayerNormalization"] = rmsNormalization;
  rules["com.microsoft:SkipSimplifiedLayerNormalization"] = skipRmsNormalization;
  rules["com.microsoft:RotaryEmbedding"] = rotaryEmbedding;
}

} // namespace mk::onnx_import
