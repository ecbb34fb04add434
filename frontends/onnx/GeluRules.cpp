// GELU's tanh approximation, gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x +
// 0.044715 x^3))), the gated MLP's activation of Gemma (gelu_pytorch_tanh)
// times the up projection. Exporters write it as a chain of Mul, Pow, Add
// and Tanh in several orders (TorchScript: x*x*x, the scalars first;
// dynamo: Pow(x, 3), the 0.5 after the 1 +), or as one Gelu node (opset 20,
// approximate = "tanh"). Each piece is a symbolic kind carrying the factor
// in front of it; the constants are checked where they must be final (the
// cube's, inside the tanh, and the 0.5), and gelu(gate) * up emits
// mk.gelu_tanh_mul.
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

#include <cmath>

namespace mk::onnx_import {

namespace {

using Kind = SymbolicKind;
using Outputs = std::vector<Symbolic>;

constexpr double kCubic = 0.044715;
const double kTanhScale = std::sqrt(2.0 / M_PI);

bool near(double value, double expected) {
  return std::abs(value - expected) <= 1e-4 * std::abs(expected);
}

std::shared_ptr<SymbolicValue> piece(const Symbolic &of, Kind kind, double scale) {
  auto value = std::make_shared<SymbolicValue>(*of);
  value->kind = kind;
  value->scale = scale;
  return value;
}

Symbolic geluTimesUp(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &gelu,
                     const Symbolic &up) {
  if (!near(gelu->scale, 0.5))
    failAt(node, "x (1 + tanh(...)) times " + std::to_string(gelu->scale) +
                     ", not GELU's 0.5");
  if (gelu->numElements() != up->numElements())
    failAt(node, "gate and up projections differ in size");
  auto product = importer.builder.create<GeluTanhMulOp>(importer.loc, gelu->value.getType(),
                                                        gelu->value, up->value);
  return importer.activation(product.getResult(), up->shape);
}

Outputs tanh(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &x = inputs.at(0);
  if (!isKind(x, Kind::CubicSum) || !near(x->scale, kTanhScale))
    failAt(node, "understood only as part of GELU's tanh approximation, "
                 "tanh(sqrt(2/pi) (x + 0.044715 x^3))");
  return {piece(x, Kind::GeluTanh, 1.0)};
}

// ONNX Gelu (opset 20): the tanh form only.
Outputs gelu(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  Symbolic x = importer.asActivation(inputs.at(0), &node);
  if (!isKind(x, Kind::Activation))
    failAt(node, "GELU of something other than an activation");
  std::string approximate = "none";
  for (const auto &attribute : node.attribute())
    if (attribute.name() == "approximate")
      approximate = attribute.s();
  if (approximate != "tanh")
    failAt(node, "GELU with approximate='" + approximate +
                     "': only the tanh approximation is supported");
  return {piece(x, Kind::Gelu, 0.5)};
}

} // namespace

bool isGeluPart(const Symbolic &value) {
  switch (value->kind) {
  case Kind::Cube:
  case Kind::CubicSum:
  case Kind::GeluTanh:
  case Kind::GeluOnePlus:
  case Kind::Gelu:
    return true;
  default:
    return false;
  }
}

Symbolic addGeluPart(GraphImporter &, const onnx::NodeProto &node, const Symbolic &a,
                     const Symbolic &b) {
  // x + c x^3
  if (isKind(a, Kind::Cube) && isKind(b, Kind::Activation) && a->value == b->value) {
    if (!near(a->scale, kCubic))
      failAt(node, "x + " + std::to_string(a->scale) + " x^3 is not GELU's x + 0.044715 x^3");
    return piece(b, Kind::CubicSum, 1.0);
  }
  // k + k tanh(...)
  std::optional<double> constant = scalarOf(b);
  if (isKind(a, Kind::GeluTanh) && constant) {
    if (!near(a->scale, *constant))
      failAt(node, std::to_string(*constant) + " + " + std::to_string(a->scale) +
                       " tanh(...) is not GELU's 1 + tanh(...) times a factor");
    return piece(a, Kind::GeluOnePlus, *constant);
  }
  return nullptr;
}

Symbolic mulGeluPart(GraphImporter &importer, const onnx::NodeProto &node, const Symbolic &a,
                     const Symbolic &b) {
  std::optional<double> scalar = scalarOf(b);
  if (isGeluPart(a) && scalar)
    return piece(a, a->kind, a->scale * *scalar);
  // x * x^2
  if (isKind(a, Kind::Activation) && isKind(b, Kind::Square) && a->value == b->value)
    return piece(a, Kind::Cube, 1.0);
  // x * k (1 + tanh(...)), x perhaps already times a scalar
  bool plainX = isKind(a, Kind::Activation) || isKind(a, Kind::ScaledActivation);
  if (plainX && isKind(b, Kind::GeluOnePlus) && a->value == b->value)
    return piece(a, Kind::Gelu, a->scale * b->scale);
  // gelu(gate) * up
  if (isKind(a, Kind::Gelu) && isKind(b, Kind::Activation))
    return geluTimesUp(importer, node, a, b);
  return nullptr;
}

void addGeluRules(std::map<std::string, Rule> &rules) {
  rules["Tanh"] = tanh;
  rules["Gelu"] = gelu;
}

} // namespace mk::onnx_import
