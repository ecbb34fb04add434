// Ops that address elements by computed positions: the Gather family,
// ScatterND and Trilu. Every index is range-checked before it is used.
#include "frontends/onnx/ConstantFolderInternal.h"

#include <algorithm>

namespace mk::onnx_import::folding {
namespace {

int64_t productOf(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i)
    product *= shape[i];
  return product;
}

const Tensor &indicesInput(const FoldContext &context, size_t index) {
  const Tensor &indices = context.input(index);
  if (indices.kind != ElementKind::Int)
    context.fail("indices (input " + std::to_string(index) + ") must be integers");
  return indices;
}

// A possibly negative index into a dimension of size `dim`, or a failure.
int64_t checkedIndex(const FoldContext &context, int64_t index, int64_t dim, int64_t axis) {
  int64_t normalized = index < 0 ? index + dim : index;
  if (normalized < 0 || normalized >= dim)
    context.fail("index " + std::to_string(index) + " is out of range for axis " +
                 std::to_string(axis) + " of size " + std::to_string(dim));
  return normalized;
}

// Copies `count` consecutive elements between tensors of the same kind.
void copyBlock(const Tensor &from, int64_t fromOffset, Tensor &to, int64_t toOffset,
               int64_t count) {
  withSameData(from, to, [&](const auto &source, auto &dest) {
    std::copy_n(source.begin() + fromOffset, count, dest.begin() + toOffset);
  });
}

Results foldGather(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  const Tensor &indices = indicesInput(context, 1);
  int64_t rank = static_cast<int64_t>(data.shape.size());
  int64_t axis = context.axis(context.intAttribute("axis", 0), rank);
  int64_t dim = data.shape[axis];
  std::vector<int64_t> positions(indices.ints.size());
  for (size_t j = 0; j < positions.size(); ++j)
    positions[j] = checkedIndex(context, indices.ints[j], dim, axis);

  std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  Tensor out = context.allocate(data.kind, std::move(shape));
  int64_t outer = productOf(data.shape, 0, axis);
  int64_t inner = productOf(data.shape, axis + 1, rank);
  int64_t count = static_cast<int64_t>(positions.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      copyBlock(data, (o * dim + positions[j]) * inner, out, (o * count + j) * inner, inner);
  return {std::move(out)};
}

// indices[..., :m] picks a slice data[batch, i0, ..., i(m-1), ...]; the first
// batch_dims dims of data and indices are walked together.
Results foldGatherND(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  const Tensor &indices = indicesInput(context, 1);
  size_t rank = data.shape.size(), indexRank = indices.shape.size();
  int64_t batchDims = context.intAttribute("batch_dims", 0);
  if (indexRank < 1 || batchDims < 0 || static_cast<size_t>(batchDims) >= std::min(rank, indexRank))
    context.fail("batch_dims " + std::to_string(batchDims) + " is invalid for data rank " +
                 std::to_string(rank) + " and indices rank " + std::to_string(indexRank));
  size_t b = static_cast<size_t>(batchDims);
  int64_t m = indices.shape.back();
  if (m < 1 || static_cast<size_t>(m) > rank - b)
    context.fail("indices last dimension " + std::to_string(m) + " is invalid for data shape " +
                 shapeString(data.shape));
  if (!std::equal(data.shape.begin(), data.shape.begin() + b, indices.shape.begin()))
    context.fail("batch dims of data " + shapeString(data.shape) + " and indices " +
                 shapeString(indices.shape) + " differ");

  std::vector<int64_t> shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), data.shape.begin() + b + m, data.shape.end());
  Tensor out = context.allocate(data.kind, std::move(shape));
  std::vector<int64_t> strides = stridesOf(data.shape);
  int64_t batches = productOf(data.shape, 0, b);
  int64_t batchSize = productOf(data.shape, b, rank);
  int64_t tuples = productOf(indices.shape, b, indexRank - 1);
  int64_t sliceSize = productOf(data.shape, b + m, rank);
  for (int64_t batch = 0; batch < batches; ++batch) {
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t tuple = batch * tuples + t;
      int64_t offset = batch * batchSize;
      for (int64_t k = 0; k < m; ++k) {
        int64_t axis = static_cast<int64_t>(b) + k;
        offset += checkedIndex(context, indices.ints[tuple * m + k], data.shape[axis], axis) *
                  strides[axis];
      }
      copyBlock(data, offset, out, tuple * sliceSize, sliceSize);
    }
  }
  return {std::move(out)};
}

Results foldGatherElements(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  const Tensor &indices = indicesInput(context, 1);
  int64_t rank = static_cast<int64_t>(data.shape.size());
  int64_t axis = context.axis(context.intAttribute("axis", 0), rank);
  if (indices.shape.size() != data.shape.size())
    context.fail("indices shape " + shapeString(indices.shape) + " and data shape " +
                 shapeString(data.shape) + " differ in rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      context.fail("indices shape " + shapeString(indices.shape) + " exceeds data shape " +
                   shapeString(data.shape) + " on axis " + std::to_string(d));
  std::vector<int64_t> dataStrides = stridesOf(data.shape);
  int64_t axisStride = dataStrides[axis];
  dataStrides[axis] = 0;
  Tensor out = context.allocate(data.kind, indices.shape);
  withSameData(data, out, [&](const auto &source, auto &dest) {
    walkStrided<1>(
        out.shape, {dataStrides}, {0}, [&](int64_t flat, const std::array<int64_t, 1> &at) {
          int64_t index = checkedIndex(context, indices.ints[flat], data.shape[axis], axis);
          dest[flat] = source[at[0] + index * axisStride];
        });
  });
  return {std::move(out)};
}

// Updates are applied in index order, so a repeated index keeps the last
// update, as onnxruntime's CPU kernel does.
Results foldScatterND(const FoldContext &context) {
  context.requireInputs(3, 3);
  const Tensor &data = context.input(0);
  const Tensor &indices = indicesInput(context, 1);
  const onnx::AttributeProto *reduction = context.attribute("reduction");
  if (reduction && reduction->s() != "none")
    context.fail("reduction '" + reduction->s() + "' cannot be folded");
  size_t rank = data.shape.size();
  if (indices.shape.empty() || indices.shape.back() < 0 ||
      static_cast<size_t>(indices.shape.back()) > rank)
    context.fail("indices shape " + shapeString(indices.shape) + " is invalid for data shape " +
                 shapeString(data.shape));
  int64_t k = indices.shape.back();
  std::vector<int64_t> updateShape(indices.shape.begin(), indices.shape.end() - 1);
  updateShape.insert(updateShape.end(), data.shape.begin() + k, data.shape.end());
  const Tensor &rawUpdates = context.input(2);
  if (rawUpdates.shape != updateShape)
    context.fail("updates shape " + shapeString(rawUpdates.shape) + " should be " +
                 shapeString(updateShape));
  Tensor updates = convertKind(rawUpdates, data.kind);

  Tensor out = context.allocate(data.kind, data.shape);
  copyBlock(data, 0, out, 0, data.numElements());
  std::vector<int64_t> strides = stridesOf(data.shape);
  int64_t tuples = productOf(indices.shape, 0, indices.shape.size() - 1);
  int64_t sliceSize = productOf(data.shape, k, rank);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t axis = 0; axis < k; ++axis)
      offset +=
          checkedIndex(context, indices.ints[t * k + axis], data.shape[axis], axis) * strides[axis];
    copyBlock(updates, t * sliceSize, out, offset, sliceSize);
  }
  return {std::move(out)};
}

// Zeroes everything below (upper) or above (lower) the k-th diagonal of
// each matrix in the trailing two dims.
Results foldTrilu(const FoldContext &context) {
  context.requireInputs(1, 2);
  const Tensor &data = context.input(0);
  size_t rank = data.shape.size();
  if (rank < 2)
    context.fail("Trilu needs rank 2 or more, got shape " + shapeString(data.shape));
  // Diagonals beyond the matrix behave alike; clamping keeps j - i - k exact.
  int64_t k = context.optionalInput(1) ? context.scalarIntInput(1) : 0;
  k = std::clamp<int64_t>(k, -kMaxElements - 1, kMaxElements + 1);
  bool upper = context.intAttribute("upper", 1) != 0;
  int64_t rows = data.shape[rank - 2], columns = data.shape[rank - 1];
  Tensor out = context.allocate(data.kind, data.shape);
  copyBlock(data, 0, out, 0, data.numElements());
  int64_t matrices = productOf(data.shape, 0, rank - 2);
  for (int64_t matrix = 0; matrix < matrices; ++matrix)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          out.set((matrix * rows + i) * columns + j, 0.0);
      }
  return {std::move(out)};
}

} // namespace

void addIndexingFolders(FoldTable &table) {
  table.insert({{"Gather", foldGather},
                {"GatherND", foldGatherND},
                {"GatherElements", foldGatherElements},
                {"ScatterND", foldScatterND},
                {"Trilu", foldTrilu}});
}

} // namespace mk::onnx_import::folding
