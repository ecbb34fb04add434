// Ops that only move elements: Identity, reshapes, transposes, broadcasts, slicing,
// concatenation and splitting, plus the generators Range and Size.
#include "frontends/onnx/ConstantFolderInternal.h"

#include <cmath>
#include <limits>
#include <numeric>

namespace mk::onnx_import::folding {
namespace {

// The same elements under a new shape. Provenance is dropped: a reshaped
// weight is no longer the initializer the weight table knows.
Tensor withShape(const Tensor &tensor, std::vector<int64_t> shape) {
  Tensor out;
  out.kind = tensor.kind;
  out.shape = std::move(shape);
  out.floats = tensor.floats;
  out.ints = tensor.ints;
  return out;
}

int64_t rankOf(const Tensor &tensor) { return static_cast<int64_t>(tensor.shape.size()); }

std::vector<int64_t> vectorInput(const FoldContext &context, size_t index) {
  const Tensor &tensor = context.input(index);
  if (tensor.shape.size() != 1)
    context.fail("input " + std::to_string(index) + " must be 1-D, has shape " +
                 shapeString(tensor.shape));
  return tensor.asInts();
}

// Identity passes the very same tensor on, so an initializer keeps its name
// (exporters route tied weights through Identity).
Results foldIdentity(const FoldContext &context) {
  context.requireInputs(1, 1);
  return {context.input(0)};
}

Results foldReshape(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  std::vector<int64_t> target = vectorInput(context, 1);
  bool allowZero = context.intAttribute("allowzero", 0) != 0;
  int64_t inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= data.shape.size())
        context.fail("shape entry " + std::to_string(i) + " copies a dimension the input " +
                     shapeString(data.shape) + " does not have");
      target[i] = data.shape[i];
    } else if (target[i] == -1) {
      if (inferred >= 0)
        context.fail("shape " + shapeString(target) + " has more than one -1");
      inferred = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      context.fail("invalid dimension " + std::to_string(target[i]) + " in shape");
    }
  }
  int64_t count = data.numElements();
  if (inferred >= 0) {
    std::vector<int64_t> known = target;
    known[inferred] = 1;
    int64_t knownCount = context.elementCount(known);
    if (knownCount == 0 || count % knownCount != 0)
      context.fail("cannot infer the -1 of shape " + shapeString(target) + " for " +
                   std::to_string(count) + " elements");
    target[inferred] = count / knownCount;
  }
  if (context.elementCount(target) != count)
    context.fail("cannot reshape " + shapeString(data.shape) + " to " + shapeString(target));
  return {withShape(data, std::move(target))};
}

Results foldUnsqueeze(const FoldContext &context) {
  context.requireInputs(1, 2);
  const Tensor &data = context.input(0);
  std::optional<std::vector<int64_t>> axes = context.intsFromInputOrAttribute(1, "axes");
  if (!axes)
    context.fail("missing axes");
  int64_t outRank = rankOf(data) + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(outRank, false);
  for (int64_t a : context.axes(*axes, outRank))
    inserted[a] = true;
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(inserted[i] ? 1 : data.shape[next++]);
  return {withShape(data, std::move(shape))};
}

Results foldSqueeze(const FoldContext &context) {
  context.requireInputs(1, 2);
  const Tensor &data = context.input(0);
  std::optional<std::vector<int64_t>> axes = context.intsFromInputOrAttribute(1, "axes");
  std::vector<bool> removed(data.shape.size(), false);
  if (axes) {
    for (int64_t a : context.axes(*axes, rankOf(data))) {
      if (data.shape[a] != 1)
        context.fail("cannot squeeze axis " + std::to_string(a) + " of shape " +
                     shapeString(data.shape));
      removed[a] = true;
    }
  } else {
    for (size_t i = 0; i < data.shape.size(); ++i)
      removed[i] = data.shape[i] == 1;
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < data.shape.size(); ++i)
    if (!removed[i])
      shape.push_back(data.shape[i]);
  return {withShape(data, std::move(shape))};
}

Results foldFlatten(const FoldContext &context) {
  context.requireInputs(1, 1);
  const Tensor &data = context.input(0);
  int64_t rank = rankOf(data);
  int64_t axis = context.intAttribute("axis", 1);
  // Unlike most axes, Flatten's may equal the rank.
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    context.fail("axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
  std::vector<int64_t> outer(data.shape.begin(), data.shape.begin() + axis);
  std::vector<int64_t> inner(data.shape.begin() + axis, data.shape.end());
  return {withShape(data, {numElementsOf(outer), numElementsOf(inner)})};
}

Results foldTranspose(const FoldContext &context) {
  context.requireInputs(1, 1);
  const Tensor &data = context.input(0);
  int64_t rank = rankOf(data);
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (std::optional<std::vector<int64_t>> given = context.intsAttribute("perm")) {
    if (static_cast<int64_t>(given->size()) != rank)
      context.fail("perm has " + std::to_string(given->size()) + " entries for rank " +
                   std::to_string(rank));
    perm = context.axes(*given, rank);
  }
  std::vector<int64_t> inStrides = stridesOf(data.shape);
  std::vector<int64_t> shape(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    shape[i] = data.shape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  Tensor out = gatherStrided(context, data, std::move(shape), strides, 0);
  // A transposed 2-D weight is still that weight, read the other way round.
  if (rank == 2 && perm[0] == 1) {
    out.origin = data.origin;
    out.originTransposed = !data.originTransposed;
    out.storage = data.storage;
  }
  return {std::move(out)};
}

Results foldExpand(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  std::vector<int64_t> shape = context.broadcast(data.shape, vectorInput(context, 1));
  std::vector<int64_t> strides = broadcastStrides(data.shape, shape);
  return {gatherStrided(context, data, std::move(shape), strides, 0)};
}

// Tile reads the input through an interleaved view [r0, d0, r1, d1, ...]
// whose repeat dims have stride 0; row-major order of that view is the
// tiled output.
Results foldTile(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  std::vector<int64_t> repeats = vectorInput(context, 1);
  if (repeats.size() != data.shape.size())
    context.fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                 std::to_string(data.shape.size()));
  std::vector<int64_t> inStrides = stridesOf(data.shape);
  std::vector<int64_t> viewShape, viewStrides, shape;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0)
      context.fail("negative repeat " + std::to_string(repeats[i]));
    viewShape.insert(viewShape.end(), {repeats[i], data.shape[i]});
    viewStrides.insert(viewStrides.end(), {0, inStrides[i]});
  }
  context.elementCount(viewShape);
  for (size_t i = 0; i < repeats.size(); ++i)
    shape.push_back(repeats[i] * data.shape[i]);
  Tensor out = gatherStrided(context, data, std::move(viewShape), viewStrides, 0);
  out.shape = std::move(shape);
  return {std::move(out)};
}

Results foldConcat(const FoldContext &context) {
  if (context.numInputs() == 0)
    context.fail("expected at least one input");
  const onnx::AttributeProto *axisAttribute = context.attribute("axis");
  if (!axisAttribute)
    context.fail("missing attribute 'axis'");
  const Tensor &first = context.input(0);
  int64_t axis = context.axis(axisAttribute->i(), rankOf(first));
  ElementKind kind = first.kind;
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor &part = context.input(i);
    bool compatible = part.shape.size() == first.shape.size();
    for (size_t d = 0; compatible && d < part.shape.size(); ++d)
      compatible = d == static_cast<size_t>(axis) || part.shape[d] == first.shape[d];
    if (!compatible)
      context.fail("cannot concatenate shapes " + shapeString(first.shape) + " and " +
                   shapeString(part.shape) + " on axis " + std::to_string(axis));
    shape[axis] += part.shape[axis];
    kind = joinKinds(kind, part.kind);
  }
  Tensor out = context.allocate(kind, shape);
  // Only parts of another kind are copied; reserve keeps the pointers valid.
  std::vector<Tensor> converted;
  converted.reserve(context.numInputs());
  std::vector<const Tensor *> parts;
  for (size_t i = 0; i < context.numInputs(); ++i) {
    const Tensor &part = context.input(i);
    if (part.kind == kind) {
      parts.push_back(&part);
    } else {
      converted.push_back(convertKind(part, kind));
      parts.push_back(&converted.back());
    }
  }
  int64_t outer = numElementsOf({shape.begin(), shape.begin() + axis});
  int64_t inner = numElementsOf({shape.begin() + axis + 1, shape.end()});
  int64_t written = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor *part : parts) {
      int64_t block = part->shape[axis] * inner;
      withSameData(*part, out, [&](const auto &from, auto &to) {
        std::copy_n(from.begin() + o * block, block, to.begin() + written);
      });
      written += block;
    }
  }
  return {std::move(out)};
}

// The sizes Split cuts into: given explicitly, or even chunks (the last
// one smaller when opset 18's num_outputs does not divide the dimension).
std::vector<int64_t> splitSizes(const FoldContext &context, int64_t dim) {
  size_t outputs = std::max<size_t>(context.numOutputs(), 1);
  if (std::optional<std::vector<int64_t>> split = context.intsFromInputOrAttribute(1, "split")) {
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0 || s > dim)
        context.fail("invalid split size " + std::to_string(s));
      total += s;
    }
    if (total != dim || split->size() != outputs)
      context.fail("split sizes do not cover dimension " + std::to_string(dim) + " with " +
                   std::to_string(outputs) + " outputs");
    return *split;
  }
  if (const onnx::AttributeProto *numOutputs = context.attribute("num_outputs")) {
    int64_t n = numOutputs->i();
    if (n < 1 || static_cast<size_t>(n) != outputs)
      context.fail("num_outputs " + std::to_string(n) + " does not match the " +
                   std::to_string(outputs) + " outputs");
    int64_t chunk = (dim + n - 1) / n;
    if (chunk * (n - 1) > dim)
      context.fail("cannot split dimension " + std::to_string(dim) + " into " + std::to_string(n) +
                   " outputs");
    std::vector<int64_t> sizes(n, chunk);
    sizes.back() = dim - chunk * (n - 1);
    return sizes;
  }
  int64_t n = static_cast<int64_t>(outputs);
  if (dim % n != 0)
    context.fail("dimension " + std::to_string(dim) + " does not split evenly into " +
                 std::to_string(n) + " outputs");
  return std::vector<int64_t>(n, dim / n);
}

Results foldSplit(const FoldContext &context) {
  context.requireInputs(1, 2);
  const Tensor &data = context.input(0);
  int64_t axis = context.axis(context.intAttribute("axis", 0), rankOf(data));
  std::vector<int64_t> strides = stridesOf(data.shape);
  Results results;
  int64_t start = 0;
  for (int64_t size : splitSizes(context, data.shape[axis])) {
    std::vector<int64_t> shape = data.shape;
    shape[axis] = size;
    results.push_back(
        gatherStrided(context, data, std::move(shape), strides, start * strides[axis]));
    start += size;
  }
  return results;
}

// One axis of a Slice after numpy-style clamping: where reading starts, how
// many elements are read and the step between them.
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
  int64_t step = 1;
};

SliceRange clampSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  // onnxruntime reads an end of INT32_MAX or INT64_MAX as numpy's None: the
  // far end in the step's direction, even when stepping backwards.
  if (end == std::numeric_limits<int32_t>::max() || end == std::numeric_limits<int64_t>::max())
    end = step < 0 ? -1 : dim;
  else if (end < 0)
    end += dim;
  // Adding dim (at most kMaxElements) to a negative value cannot overflow.
  if (start < 0)
    start += dim;
  SliceRange range;
  range.step = step;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    range.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = dim == 0 ? 0 : std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    int64_t magnitude =
        step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    range.count = start > end ? (start - end - 1) / magnitude + 1 : 0;
  }
  range.start = start;
  return range;
}

Results foldSlice(const FoldContext &context) {
  context.requireInputs(1, 5);
  const Tensor &data = context.input(0);
  int64_t rank = rankOf(data);
  std::optional<std::vector<int64_t>> starts = context.intsFromInputOrAttribute(1, "starts");
  std::optional<std::vector<int64_t>> ends = context.intsFromInputOrAttribute(2, "ends");
  if (!starts || !ends)
    context.fail("missing starts or ends");
  size_t n = starts->size();
  std::vector<int64_t> axes(n), steps(n, 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (std::optional<std::vector<int64_t>> given = context.intsFromInputOrAttribute(3, "axes"))
    axes = *given;
  if (context.optionalInput(4))
    steps = context.input(4).asInts();
  if (ends->size() != n || axes.size() != n || steps.size() != n)
    context.fail("starts, ends, axes and steps differ in length");
  axes = context.axes(axes, rank);

  std::vector<int64_t> shape = data.shape;
  std::vector<int64_t> strides = stridesOf(data.shape);
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    if (steps[i] == 0)
      context.fail("slice step is 0");
    int64_t axis = axes[i];
    SliceRange range = clampSlice((*starts)[i], (*ends)[i], steps[i], data.shape[axis]);
    shape[axis] = range.count;
    if (range.count == 0)
      continue;
    offset += range.start * strides[axis];
    // A single element never advances, and a huge step would overflow.
    strides[axis] = range.count == 1 ? 0 : strides[axis] * range.step;
  }
  return {gatherStrided(context, data, std::move(shape), strides, offset)};
}

Results foldSize(const FoldContext &context) {
  context.requireInputs(1, 1);
  Tensor out = Tensor::intVector({context.input(0).numElements()});
  out.shape.clear();
  return {std::move(out)};
}

int64_t rangeCountInts(const FoldContext &context, int64_t start, int64_t limit, int64_t delta) {
  __int128 span = static_cast<__int128>(limit) - start;
  if ((span > 0) != (delta > 0) || span == 0)
    return 0;
  __int128 count = (span + delta + (delta > 0 ? -1 : 1)) / delta;
  if (count > kMaxElements)
    context.fail("Range would produce more than " + std::to_string(kMaxElements) + " elements");
  return static_cast<int64_t>(count);
}

// onnxruntime accumulates start += delta rather than computing
// start + i * delta, which matters for float ranges; do the same.
Results foldRange(const FoldContext &context) {
  context.requireInputs(3, 3);
  const Tensor &start = context.input(0), &limit = context.input(1), &delta = context.input(2);
  for (size_t i = 0; i < 3; ++i)
    if (context.input(i).numElements() != 1)
      context.fail("Range inputs must be scalars");
  ElementKind kind = joinKinds(joinKinds(start.kind, limit.kind), delta.kind);
  if (kind == ElementKind::Bool)
    context.fail("Range of booleans");
  if (delta.at(0) == 0)
    context.fail("Range delta is 0");
  if (kind == ElementKind::Float) {
    float value = static_cast<float>(start.at(0)), step = static_cast<float>(delta.at(0));
    double count = std::ceil(static_cast<double>(static_cast<float>(limit.at(0)) - value) / step);
    if (!(count <= static_cast<double>(kMaxElements)))
      context.fail("Range would produce more than " + std::to_string(kMaxElements) + " elements");
    Tensor out = context.allocate(kind, {std::max<int64_t>(0, truncateToInt(count))});
    for (float &v : out.floats) {
      v = value;
      value += step;
    }
    return {std::move(out)};
  }
  int64_t first = start.ints[0], step = delta.ints[0];
  Tensor out = context.allocate(kind, {rangeCountInts(context, first, limit.ints[0], step)});
  uint64_t value = static_cast<uint64_t>(first);
  for (int64_t &v : out.ints) {
    v = static_cast<int64_t>(value);
    value += static_cast<uint64_t>(step);
  }
  return {std::move(out)};
}

} // namespace

void addLayoutFolders(FoldTable &table) {
  table.insert({{"Identity", foldIdentity},
                {"Reshape", foldReshape},
                {"Unsqueeze", foldUnsqueeze},
                {"Squeeze", foldSqueeze},
                {"Flatten", foldFlatten},
                {"Transpose", foldTranspose},
                {"Expand", foldExpand},
                {"Tile", foldTile},
                {"Concat", foldConcat},
                {"Split", foldSplit},
                {"Slice", foldSlice},
                {"Size", foldSize},
                {"Range", foldRange}});
}

} // namespace mk::onnx_import::folding
