// The folder's entry point and the context and helpers its op families
// share; the ops themselves live in ConstantFolderTypes/Layout/Indexing/
// Elementwise/Reduction.cpp.
#include "frontends/onnx/ConstantFolder.h"

#include "core/weights/TransposedValues.h"
#include "frontends/onnx/ConstantFolderInternal.h"
#include "frontends/onnx/ImportError.h"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <set>

namespace mk::onnx_import {
namespace folding {

void FoldContext::fail(const std::string &reason) const { failAt(node_, reason); }

void FoldContext::requireInputs(size_t min, size_t max) const {
  if (inputs_.size() < min || inputs_.size() > max) {
    std::string expected =
        min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    fail("expected " + expected + " inputs, got " + std::to_string(inputs_.size()));
  }
}

const Tensor &FoldContext::input(size_t index) const {
  if (index >= inputs_.size() || !inputs_[index])
    fail("required input " + std::to_string(index) + " is missing");
  return *inputs_[index];
}

const Tensor *FoldContext::optionalInput(size_t index) const {
  return index < inputs_.size() ? inputs_[index] : nullptr;
}

int64_t FoldContext::scalarIntInput(size_t index) const {
  const Tensor &tensor = input(index);
  if (tensor.numElements() != 1)
    fail("input " + std::to_string(index) + " must hold a single value, has shape " +
         shapeString(tensor.shape));
  return tensor.kind == ElementKind::Float ? truncateToInt(tensor.floats[0]) : tensor.ints[0];
}

const onnx::AttributeProto *FoldContext::attribute(std::string_view name) const {
  for (const onnx::AttributeProto &attribute : node_.attribute())
    if (attribute.name() == name) {
      if (!attribute.ref_attr_name().empty())
        fail("attribute '" + std::string(name) + "' refers to a function attribute");
      return &attribute;
    }
  return nullptr;
}

int64_t FoldContext::intAttribute(std::string_view name, int64_t fallback) const {
  const onnx::AttributeProto *found = attribute(name);
  return found ? found->i() : fallback;
}

std::optional<std::vector<int64_t>> FoldContext::intsAttribute(std::string_view name) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return std::nullopt;
  return std::vector<int64_t>(found->ints().begin(), found->ints().end());
}

std::optional<std::vector<int64_t>>
FoldContext::intsFromInputOrAttribute(size_t index, std::string_view name) const {
  if (const Tensor *tensor = optionalInput(index)) {
    if (tensor->shape.size() > 1)
      fail("input " + std::to_string(index) + " must be 1-D, has shape " +
           shapeString(tensor->shape));
    return tensor->asInts();
  }
  return intsAttribute(name);
}

int64_t FoldContext::axis(int64_t axis, int64_t rank) const {
  int64_t normalized = normalizeAxis(axis, rank);
  if (normalized < 0)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return normalized;
}

std::vector<int64_t> FoldContext::axes(const std::vector<int64_t> &axes, int64_t rank) const {
  std::vector<int64_t> normalized;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    int64_t n = axis(a, rank);
    if (!seen.insert(n).second)
      fail("axis " + std::to_string(a) + " is repeated");
    normalized.push_back(n);
  }
  return normalized;
}

// Zero dims are skipped in the product on purpose: the other dims of an
// empty tensor must still be bounded, or stride arithmetic could overflow.
int64_t FoldContext::elementCount(const std::vector<int64_t> &shape) const {
  int64_t count = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      fail("negative dimension in shape " + shapeString(shape));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (count > kMaxElements / d)
      fail("shape " + shapeString(shape) + " is too large (over " + std::to_string(kMaxElements) +
           " elements)");
    count *= d;
  }
  return empty ? 0 : count;
}

Tensor FoldContext::allocate(ElementKind kind, std::vector<int64_t> shape) const {
  Tensor tensor;
  tensor.kind = kind;
  int64_t count = elementCount(shape);
  tensor.shape = std::move(shape);
  if (kind == ElementKind::Float)
    tensor.floats.assign(count, 0.0f);
  else
    tensor.ints.assign(count, 0);
  return tensor;
}

std::vector<int64_t> FoldContext::broadcast(const std::vector<int64_t> &a,
                                            const std::vector<int64_t> &b) const {
  std::vector<int64_t> out;
  if (!broadcastShapes(a, b, out))
    fail("shapes " + shapeString(a) + " and " + shapeString(b) + " do not broadcast");
  return out;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

ElementKind joinKinds(ElementKind a, ElementKind b) {
  if (a == ElementKind::Float || b == ElementKind::Float)
    return ElementKind::Float;
  if (a == ElementKind::Int || b == ElementKind::Int)
    return ElementKind::Int;
  return ElementKind::Bool;
}

int64_t truncateToInt(double value) {
  if (std::isnan(value))
    return 0;
  // 2^63 is exactly representable; anything at or past it saturates.
  constexpr double limit = 9223372036854775808.0;
  if (value >= limit)
    return std::numeric_limits<int64_t>::max();
  if (value < -limit)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

Tensor convertKind(const Tensor &tensor, ElementKind kind) {
  Tensor out;
  out.kind = kind;
  out.shape = tensor.shape;
  if (tensor.kind == kind) {
    out.floats = tensor.floats;
    out.ints = tensor.ints;
    return out;
  }
  size_t count = tensor.kind == ElementKind::Float ? tensor.floats.size() : tensor.ints.size();
  if (kind == ElementKind::Float) {
    out.floats.resize(count);
    for (size_t i = 0; i < count; ++i)
      out.floats[i] = static_cast<float>(tensor.ints[i]);
    return out;
  }
  out.ints.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (kind == ElementKind::Bool)
      out.ints[i] =
          tensor.kind == ElementKind::Float ? tensor.floats[i] != 0.0f : tensor.ints[i] != 0;
    else
      out.ints[i] =
          tensor.kind == ElementKind::Float ? truncateToInt(tensor.floats[i]) : tensor.ints[i];
  }
  return out;
}

const Tensor &asKind(const Tensor &tensor, ElementKind kind, Tensor &storage) {
  if (tensor.kind == kind)
    return tensor;
  storage = convertKind(tensor, kind);
  return storage;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &from,
                                      const std::vector<int64_t> &to) {
  std::vector<int64_t> own = stridesOf(from);
  std::vector<int64_t> strides(to.size(), 0);
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    strides[offset + i] = from[i] == 1 ? 0 : own[i];
  return strides;
}

Tensor gatherStrided(const FoldContext &context, const Tensor &source, std::vector<int64_t> shape,
                     const std::vector<int64_t> &strides, int64_t offset) {
  Tensor out = context.allocate(source.kind, std::move(shape));
  withSameData(source, out, [&](const auto &from, auto &to) {
    walkStrided<1>(out.shape, {strides}, {offset},
                   [&](int64_t flat, const std::array<int64_t, 1> &at) { to[flat] = from[at[0]]; });
  });
  return out;
}

namespace {

// Inputs come from the importer's own bookkeeping, but a malformed
// initializer must still fail here rather than be read out of bounds.
void validateInputs(const FoldContext &context) {
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor *tensor = context.optionalInput(i);
    if (!tensor)
      continue;
    int64_t count = context.elementCount(tensor->shape);
    size_t held = tensor->kind == ElementKind::Float ? tensor->floats.size() : tensor->ints.size();
    if (held != static_cast<size_t>(count))
      context.fail("input " + std::to_string(i) + " holds " + std::to_string(held) +
                   " values for shape " + shapeString(tensor->shape));
  }
}

const FoldTable &foldTable() {
  static const FoldTable table = [] {
    FoldTable t;
    addTypeFolders(t);
    addLayoutFolders(t);
    addIndexingFolders(t);
    addElementwiseFolders(t);
    addReductionFolders(t);
    return t;
  }();
  return table;
}

// Identity, a Cast that keeps the values (to f32, or to the type they are
// stored in) and a 2-D Transpose of a lazy initializer, without reading it:
// the ops between a weight and its MatMul or Gather. Nothing for other ops.
std::optional<std::vector<Tensor>> foldLazily(const onnx::NodeProto &node,
                                              const std::vector<const Tensor *> &inputs) {
  if (inputs.size() != 1 || !inputs[0] || !inputs[0]->isLazy())
    return std::nullopt;
  const Tensor &input = *inputs[0];
  FoldContext context(node, inputs);
  const std::string &op = node.op_type();
  if (op == "Identity")
    return std::vector<Tensor>{input};
  if (op == "Cast") {
    const onnx::AttributeProto *to = context.attribute("to");
    if (!to)
      return std::nullopt;
    using TP = onnx::TensorProto;
    bool keepsValues = to->i() == TP::FLOAT || to->i() == TP::DOUBLE ||
                       (to->i() == TP::FLOAT16 && input.storage == StorageType::F16) ||
                       (to->i() == TP::BFLOAT16 && input.storage == StorageType::BF16);
    if (!keepsValues)
      return std::nullopt;
    return std::vector<Tensor>{input};
  }
  if (op == "Transpose" && input.shape.size() == 2) {
    std::optional<std::vector<int64_t>> perm = context.intsAttribute("perm");
    if (perm && *perm != std::vector<int64_t>{1, 0})
      return std::nullopt;
    Tensor out = input;
    out.shape = {input.shape[1], input.shape[0]};
    out.lazy = transposedValues(input.lazy, static_cast<uint64_t>(input.shape[0]),
                                static_cast<uint64_t>(input.shape[1]));
    // A transposed 2-D weight is still that weight, read the other way round.
    out.originTransposed = !input.originTransposed;
    return std::vector<Tensor>{std::move(out)};
  }
  return std::nullopt;
}

} // namespace
} // namespace folding

bool canFoldOp(const std::string &opType) { return folding::foldTable().count(opType) != 0; }

std::vector<Tensor> foldConstantNode(const onnx::NodeProto &node,
                                     const std::vector<const Tensor *> &inputs) {
  folding::FoldContext context(node, inputs);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    context.fail("operators of domain '" + node.domain() + "' cannot be constant-folded");
  const folding::FoldTable &table = folding::foldTable();
  auto found = table.find(node.op_type());
  if (found == table.end())
    context.fail("operator cannot be constant-folded");
  if (auto passed = folding::foldLazily(node, inputs))
    return std::move(*passed);
  // Any other op reads its inputs: a lazy initializer is read whole here.
  std::vector<Tensor> read;
  read.reserve(inputs.size());
  std::vector<const Tensor *> held = inputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && inputs[i]->isLazy()) {
      try {
        read.push_back(materializeTensor(*inputs[i]));
      } catch (const std::runtime_error &failure) {
        context.fail(failure.what());
      }
      held[i] = &read.back();
    }
  folding::FoldContext eager(node, held);
  folding::validateInputs(eager);
  return found->second(eager);
}

} // namespace mk::onnx_import
