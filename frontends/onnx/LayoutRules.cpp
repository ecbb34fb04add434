// Rules for ops that move data around without computing: reshapes,
// transposes, casts, slices and concatenations, plus the embedding gather.
//
// With batch 1 and one token, an activation's elements keep their order
// through any reshape, and through any transpose that keeps its non-unit axes
// in order, so most layout ops only change the recorded shape. The KV
// sequences are the exception: their axes are labelled so that the GQA
// repeat (unsqueeze, expand, reshape) and the key transpose are recognized.
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

namespace mk::onnx_import {

namespace {

using Outputs = std::vector<Symbolic>;

bool isFloatType(int64_t onnxType) {
  using TP = onnx::TensorProto;
  return onnxType == TP::FLOAT || onnxType == TP::FLOAT16 || onnxType == TP::BFLOAT16 ||
         onnxType == TP::DOUBLE;
}

// Kinds whose last axis carries meaning (a normalized axis, frequencies, a
// head dimension): a reshape must keep it.
bool lastAxisMatters(SymbolicKind kind) {
  switch (kind) {
  case SymbolicKind::Activation:
  case SymbolicKind::ScaledActivation:
  case SymbolicKind::Sigmoid:
  case SymbolicKind::Silu:
  case SymbolicKind::Token:
  case SymbolicKind::Position:
  case SymbolicKind::Angles: // one non-unit axis: the frequencies
  case SymbolicKind::Trig:
    return false;
  default:
    return true;
  }
}

bool isSequence(const Symbolic &value) {
  return isKind(value, SymbolicKind::PastCache) || isKind(value, SymbolicKind::KvSequence);
}

// Applies a new shape with the same element order to a non-sequence value.
Symbolic reshaped(const onnx::NodeProto &node, const Symbolic &input,
                  std::vector<int64_t> shape) {
  if (numElementsOf(shape) != input->numElements())
    failAt(node, "reshape of " + shapeText(input->shape) + " to " + shapeText(shape) +
                     " changes the number of elements");
  if (isKind(input, SymbolicKind::Scores) || isKind(input, SymbolicKind::Probabilities) ||
      isKind(input, SymbolicKind::NanCheck))
    failAt(node, "attention scores are reshaped in a way the importer does not know");
  if (lastAxisMatters(input->kind) && !shape.empty() && !input->shape.empty() &&
      shape.back() != input->shape.back())
    failAt(node, "reshape changes the last axis of a value whose last axis has a meaning "
                 "(normalized axis, rotary frequencies or head dimension)");
  return GraphImporter::with(*input, std::move(shape));
}

// Relabels a KV sequence's axes after a reshape: only unit axes may appear or
// vanish, and adjacent K and G axes may merge into query heads H.
Symbolic reshapedSequence(const onnx::NodeProto &node, const Symbolic &input,
                          const std::vector<int64_t> &shape) {
  std::vector<std::pair<int64_t, char>> inAxes;
  for (size_t i = 0; i < input->shape.size(); ++i)
    if (input->shape[i] != 1)
      inAxes.push_back({input->shape[i], input->axes[i]});
  std::string axes;
  size_t next = 0;
  for (int64_t dim : shape) {
    if (dim == 1) {
      axes += '1';
      continue;
    }
    int64_t product = 1;
    std::string merged;
    while (next < inAxes.size() && product < dim) {
      product *= inAxes[next].first;
      merged += inAxes[next].second;
      ++next;
    }
    if (product != dim)
      failAt(node, "reshape of the KV cache from " + shapeText(input->shape) + " to " +
                       shapeText(shape) + " splits an axis");
    if (merged.size() == 1)
      axes += merged;
    else if (merged == "KG")
      axes += 'H';
    else
      failAt(node, "reshape of the KV cache merges axes '" + merged + "'");
  }
  if (next != inAxes.size())
    failAt(node, "reshape of the KV cache drops an axis");
  auto value = std::make_shared<SymbolicValue>(*input);
  value->shape = shape;
  value->axes = axes;
  return value;
}

Symbolic reshapeAny(const onnx::NodeProto &node, const Symbolic &input,
                    const std::vector<int64_t> &shape) {
  if (isSequence(input))
    return reshapedSequence(node, input, shape);
  return reshaped(node, input, shape);
}

std::vector<int64_t> axesInput(const onnx::NodeProto &node, const Inputs &inputs, size_t index) {
  if (inputs.size() > index && inputs[index]) {
    if (!isKind(inputs[index], SymbolicKind::Constant))
      failAt(node, "axes must be constant");
    return constantOf(inputs[index]).asInts();
  }
  return intsAttribute(node, "axes");
}

Outputs passThrough(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  if (inputs.empty() || !inputs[0])
    failAt(node, "expects an input");
  return {inputs[0]};
}

Outputs cast(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  int64_t to = intAttribute(node, "to", onnx::TensorProto::FLOAT);
  if (node.op_type() == "CastLike") {
    if (inputs.size() < 2 || !inputs[1] || !isKind(inputs[1], SymbolicKind::Constant))
      failAt(node, "CastLike needs a constant target");
    to = constantOf(inputs[1]).kind == ElementKind::Float ? onnx::TensorProto::FLOAT
                                                          : onnx::TensorProto::INT64;
  }
  if (isKind(input, SymbolicKind::Position) || isKind(input, SymbolicKind::Token)) {
    auto value = std::make_shared<SymbolicValue>(*input);
    value->isFloat = isFloatType(to);
    return {value};
  }
  if (!isFloatType(to))
    failAt(node, "cast of an activation to a non-float type");
  return {input};
}

Outputs reshape(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  if (inputs.size() < 2 || !isKind(inputs[1], SymbolicKind::Constant))
    failAt(node, "the target shape must be constant");
  Symbolic input = inputs[0];
  std::vector<int64_t> spec = constantOf(inputs[1]).asInts(), shape;
  bool allowZero = intAttribute(node, "allowzero", 0) != 0;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t dim = spec[i];
    if (dim == 0 && !allowZero) {
      if (i >= input->shape.size())
        failAt(node, "target shape copies a dimension the input does not have");
      dim = input->shape[i];
    }
    if (dim == -1) {
      if (inferred >= 0)
        failAt(node, "target shape has two -1 entries");
      inferred = static_cast<int64_t>(i);
      shape.push_back(1);
      continue;
    }
    if (dim < 0)
      failAt(node, "target shape has a negative dimension");
    known *= dim;
    shape.push_back(dim);
  }
  if (inferred >= 0) {
    if (known == 0 || input->numElements() % known != 0)
      failAt(node, "cannot infer the -1 dimension of " + shapeText(spec));
    shape[inferred] = input->numElements() / known;
  }
  // A slice of a vector split into heads (Phi-3's q out of q | k | v) is
  // the piece of the vector it is.
  if (isKind(input, SymbolicKind::HalfSlice) && !shape.empty() &&
      shape.back() != input->shape.back())
    input = importer.asActivation(input, &node);
  return {reshapeAny(node, input, shape)};
}

Outputs unsqueeze(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  std::vector<int64_t> axes = axesInput(node, inputs, 1);
  int64_t rank = static_cast<int64_t>(input->shape.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    int64_t normalized = normalizeAxis(axis, rank);
    if (normalized < 0 || inserted[normalized])
      failAt(node, "invalid unsqueeze axis " + std::to_string(axis));
    inserted[normalized] = true;
  }
  std::vector<int64_t> shape;
  std::string labels;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (inserted[i]) {
      shape.push_back(1);
      labels += '1';
    } else {
      shape.push_back(input->shape[next]);
      if (isSequence(input))
        labels += input->axes[next];
      ++next;
    }
  }
  auto value = std::make_shared<SymbolicValue>(*input);
  value->shape = shape;
  if (isSequence(input))
    value->axes = labels;
  return {value};
}

Outputs squeeze(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  int64_t rank = static_cast<int64_t>(input->shape.size());
  std::vector<int64_t> axes = axesInput(node, inputs, 1);
  std::vector<bool> removed(rank, axes.empty());
  for (int64_t axis : axes) {
    int64_t normalized = normalizeAxis(axis, rank);
    if (normalized < 0 || input->shape[normalized] != 1)
      failAt(node, "cannot squeeze axis " + std::to_string(axis) + " of " +
                       shapeText(input->shape));
    removed[normalized] = true;
  }
  auto value = std::make_shared<SymbolicValue>(*input);
  value->shape.clear();
  value->axes.clear();
  for (int64_t i = 0; i < rank; ++i) {
    if (removed[i] && input->shape[i] == 1)
      continue;
    value->shape.push_back(input->shape[i]);
    if (isSequence(input))
      value->axes += input->axes[i];
  }
  return {value};
}

Outputs flatten(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  int64_t rank = static_cast<int64_t>(input->shape.size());
  int64_t axis = intAttribute(node, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    failAt(node, "invalid flatten axis");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= input->shape[i];
  return {reshapeAny(node, input, {outer, input->numElements() / std::max<int64_t>(outer, 1)})};
}

Outputs transpose(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  int64_t rank = static_cast<int64_t>(input->shape.size());
  std::vector<int64_t> perm = intsAttribute(node, "perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    failAt(node, "perm does not match the input's rank");
  auto value = std::make_shared<SymbolicValue>(*input);
  value->shape.clear();
  value->axes.clear();
  int64_t lastNonUnit = -1;
  bool orderKept = true;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= rank)
      failAt(node, "invalid perm entry " + std::to_string(axis));
    value->shape.push_back(input->shape[axis]);
    if (isSequence(input))
      value->axes += input->axes[axis];
    if (input->shape[axis] != 1) {
      orderKept &= axis > lastNonUnit;
      lastNonUnit = axis;
    }
  }
  if (!isSequence(input) && !orderKept)
    failAt(node, "transpose reorders the axes of an activation " + shapeText(input->shape));
  return {value};
}

Outputs expand(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  if (inputs.size() < 2 || !isKind(inputs[1], SymbolicKind::Constant))
    failAt(node, "the target shape must be constant");
  std::vector<int64_t> target = constantOf(inputs[1]).asInts(), shape;
  if (!broadcastShapes(input->shape, target, shape))
    failAt(node, "cannot expand " + shapeText(input->shape) + " to " + shapeText(target));
  if (!isSequence(input)) {
    if (numElementsOf(shape) != input->numElements())
      failAt(node, "expand would repeat an activation's elements");
    return {reshaped(node, input, shape)};
  }
  // The GQA repeat: a unit axis right after the KV head axis grows into G.
  std::string axes(shape.size() - input->shape.size(), '1');
  axes += input->axes;
  std::vector<int64_t> padded(shape.size() - input->shape.size(), 1);
  padded.insert(padded.end(), input->shape.begin(), input->shape.end());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (padded[i] == shape[i])
      continue;
    if (i == 0 || axes[i - 1] != 'K')
      failAt(node, "expand of the KV cache other than the grouped-query repeat");
    axes[i] = 'G';
  }
  auto value = std::make_shared<SymbolicValue>(*input);
  value->shape = shape;
  value->axes = axes;
  return {value};
}

// Slice of the last axis of an activation: half of rotate_half, the
// rotated part of a head under partial rotary (and the halves of that), or
// a piece of a vector (PlainActivations.cpp).
Symbolic sliceLastAxis(GraphImporter &importer, const onnx::NodeProto &node, Symbolic input,
                       int64_t lo, int64_t hi) {
  if (lo == 0 && hi == input->shape.back())
    return input;
  // A piece of a vector sliced again (one KV head's k out of q | k | v, then
  // its rotated part) is the plain vector it is; a head's first entries
  // sliced again are rotate_half's halves of them.
  if (isKind(input, SymbolicKind::HalfSlice) && input->lo != 0)
    input = importer.asActivation(input, &node);
  bool ofPrefix = isKind(input, SymbolicKind::HalfSlice) && input->lo == 0;
  if (!isKind(input, SymbolicKind::Activation) && !ofPrefix)
    failAt(node, "slices only activations along their last axis");
  auto value = std::make_shared<SymbolicValue>(*input);
  value->kind = SymbolicKind::HalfSlice;
  value->axisSize = input->shape.back();
  value->lo = lo;
  value->hi = hi;
  value->shape.back() = hi - lo;
  return value;
}

Outputs slice(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  auto operand = [&](size_t i, const char *attribute) -> std::vector<int64_t> {
    if (inputs.size() > i && inputs[i]) {
      if (!isKind(inputs[i], SymbolicKind::Constant))
        failAt(node, "slice bounds must be constant");
      return constantOf(inputs[i]).asInts();
    }
    return intsAttribute(node, attribute);
  };
  std::vector<int64_t> starts = operand(1, "starts"), ends = operand(2, "ends");
  std::vector<int64_t> axes = operand(3, "axes"), steps = operand(4, "steps");
  int64_t rank = static_cast<int64_t>(input->shape.size());
  if (starts.size() != 1 || ends.size() != 1 || rank == 0)
    failAt(node, "slices one axis only");
  int64_t axis = axes.empty() ? 0 : normalizeAxis(axes[0], rank);
  if (axis != rank - 1 || (!steps.empty() && steps[0] != 1))
    failAt(node, "slices an activation other than along its last axis with step 1");
  int64_t size = input->shape.back();
  auto clampIndex = [&](int64_t index) {
    if (index < 0)
      index += size;
    return std::clamp<int64_t>(index, 0, size);
  };
  int64_t lo = clampIndex(starts[0]), hi = clampIndex(ends[0]);
  return {sliceLastAxis(importer, node, input, lo, std::max(lo, hi))};
}

Outputs split(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &input = inputs.at(0);
  int64_t rank = static_cast<int64_t>(input->shape.size());
  if (normalizeAxis(intAttribute(node, "axis", 0), rank) != rank - 1)
    failAt(node, "splits an activation other than along its last axis");
  std::vector<int64_t> sizes;
  if (inputs.size() > 1 && inputs[1]) {
    if (!isKind(inputs[1], SymbolicKind::Constant))
      failAt(node, "split sizes must be constant");
    sizes = constantOf(inputs[1]).asInts();
  } else {
    sizes = intsAttribute(node, "split");
  }
  int64_t size = input->shape.back();
  if (sizes.empty()) {
    int64_t parts = node.output_size();
    if (parts == 0 || size % parts != 0)
      failAt(node, "cannot split evenly");
    sizes.assign(parts, size / parts);
  }
  Outputs outputs;
  int64_t lo = 0;
  for (int64_t part : sizes) {
    if (part < 0 || lo + part > size)
      failAt(node, "split sizes exceed the axis");
    outputs.push_back(sliceLastAxis(importer, node, input, lo, lo + part));
    lo += part;
  }
  return outputs;
}

Outputs gather(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &table = inputs.at(0), &indices = inputs.at(1);
  if (!isKind(table, SymbolicKind::Constant) || !isKind(indices, SymbolicKind::Token) ||
      intAttribute(node, "axis", 0) != 0)
    failAt(node, "the only gather on activations mk knows is the token embedding");
  const Tensor &weights = constantOf(table);
  if (weights.shape.size() != 2)
    failAt(node, "the embedding table must be 2-D, it is " + shapeText(weights.shape));
  auto symbol = importer.weightFor(weights, false, node.name() + ".table");
  int64_t hidden = weights.shape[1];
  auto embedding = importer.builder.create<EmbeddingOp>(importer.loc, importer.vectorType(hidden),
                                                        symbol, indices->value);
  std::vector<int64_t> shape = indices->shape;
  shape.push_back(hidden);
  return {importer.activation(embedding.getResult(), shape)};
}

// Concatenations with a meaning: appending this step's key or value to the
// past cache, rotate_half's halves, and the two copies of the rotary angles.
Outputs concat(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  std::vector<Symbolic> parts;
  for (const Symbolic &input : inputs)
    if (input && input->numElements() != 0)
      parts.push_back(input);
  if (parts.size() == 1)
    return {parts[0]};
  if (parts.size() != 2)
    failAt(node, "concatenation of activations the importer does not know");
  const Symbolic &first = parts[0];
  // This step's entry appended to the cache may be a piece of q | k | v.
  Symbolic second = isKind(first, SymbolicKind::PastCache)
                        ? importer.asActivation(parts[1], &node) : parts[1];
  int64_t rank = static_cast<int64_t>(first->shape.size());
  int64_t axis = normalizeAxis(intAttribute(node, "axis", 0), rank);
  if (axis < 0 || second->shape.size() != first->shape.size())
    failAt(node, "invalid concat axis or ranks");

  if (isKind(first, SymbolicKind::PastCache) && isKind(second, SymbolicKind::Activation)) {
    if (first->axes[axis] != 'T')
      failAt(node, "appends to the KV cache along an axis other than time");
    std::vector<int64_t> expected = first->shape;
    expected[axis] = 1;
    if (second->shape != expected)
      failAt(node, "this step's entry " + shapeText(second->shape) + " does not fit the cache " +
                       shapeText(first->shape));
    auto value = std::make_shared<SymbolicValue>(*first);
    value->kind = SymbolicKind::KvSequence;
    value->shape[axis] += 1;
    value->newEntry = second->value;
    return {value};
  }
  if (axis != rank - 1)
    failAt(node, "concatenation of activations along an axis other than the last");
  if (isKind(first, SymbolicKind::NegatedSlice) && isKind(second, SymbolicKind::HalfSlice) &&
      first->value == second->value && second->lo == 0 && first->lo == second->hi &&
      first->hi == first->axisSize) {
    auto value = std::make_shared<SymbolicValue>(*first);
    value->kind = SymbolicKind::RotatedHalf;
    value->shape.back() = first->axisSize;
    value->lo = second->hi;
    return {value};
  }
  // Partial rotary: the rotated first entries of each head, then the rest.
  if (isKind(first, SymbolicKind::RotaryPrefix) && isKind(second, SymbolicKind::HalfSlice) &&
      first->value == second->value && second->lo == first->shape.back() &&
      second->hi == first->axisSize && second->axisSize == first->axisSize) {
    std::vector<int64_t> shape = first->shape;
    shape.back() = first->axisSize;
    return {emitRotary(importer, node, first->value, shape, first->axisSize, first->freqs,
                       false)};
  }
  if (isKind(first, SymbolicKind::Angles) && isKind(second, SymbolicKind::Angles) &&
      first->shape.back() == static_cast<int64_t>(first->freqs.size()) &&
      second->shape.back() == static_cast<int64_t>(second->freqs.size())) {
    auto value = std::make_shared<SymbolicValue>(*first);
    value->freqs.insert(value->freqs.end(), second->freqs.begin(), second->freqs.end());
    value->shape.back() += second->shape.back();
    return {value};
  }
  failAt(node, "concatenation of activations the importer does not know");
}

Outputs isNaN(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  if (!isKind(inputs.at(0), SymbolicKind::Probabilities))
    failAt(node, "isnan is understood only as the guard after the attention softmax");
  auto value = std::make_shared<SymbolicValue>(*inputs[0]);
  value->kind = SymbolicKind::NanCheck;
  return {value};
}

Outputs where(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  // where(isnan(p), 0, p) is p: a softmax over at least one visible position
  // has no NaN.
  const Symbolic &condition = inputs.at(0), &onTrue = inputs.at(1), &onFalse = inputs.at(2);
  if (isKind(condition, SymbolicKind::NanCheck) && scalarOf(onTrue) == 0.0 &&
      isKind(onFalse, SymbolicKind::Probabilities) && onFalse->query == condition->query)
    return {onFalse};
  // A constant condition that selects one side everywhere.
  if (isKind(condition, SymbolicKind::Constant)) {
    const Tensor &mask = constantOf(condition);
    bool allTrue = true, allFalse = true;
    for (int64_t i = 0; i < mask.numElements(); ++i) {
      allTrue &= mask.at(i) != 0;
      allFalse &= mask.at(i) == 0;
    }
    const Symbolic &chosen = allTrue ? onTrue : onFalse;
    if ((allTrue || allFalse) && chosen->kind != SymbolicKind::Constant) {
      std::vector<int64_t> shape;
      if (broadcastShapes(mask.shape, chosen->shape, shape) &&
          numElementsOf(shape) == chosen->numElements())
        return {GraphImporter::with(*chosen, shape)};
    }
  }
  failAt(node, "where on activations is understood only as the softmax NaN guard");
}

} // namespace

void addLayoutRules(std::map<std::string, Rule> &rules) {
  rules["Identity"] = passThrough;
  rules["Cast"] = cast;
  rules["CastLike"] = cast;
  rules["Reshape"] = reshape;
  rules["Unsqueeze"] = unsqueeze;
  rules["Squeeze"] = squeeze;
  rules["Flatten"] = flatten;
  rules["Transpose"] = transpose;
  rules["Expand"] = expand;
  rules["Slice"] = slice;
  rules["Concat"] = concat;
  rules["Split"] = split;
  rules["Gather"] = gather;
  rules["IsNaN"] = isNaN;
  rules["Where"] = where;
}

} // namespace mk::onnx_import
