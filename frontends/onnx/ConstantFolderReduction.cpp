// Ops that combine elements along axes: the Reduce family, CumSum, Softmax
// and MatMul. Float sums accumulate in float, in index order, as a
// straightforward float32 kernel would.
#include "frontends/onnx/ConstantFolderInternal.h"

#include <cmath>
#include <limits>

namespace mk::onnx_import::folding {
namespace {

constexpr int64_t kMaxMatMulWork = int64_t{1} << 33;

int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

int64_t productOf(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i)
    product *= shape[i];
  return product;
}

enum class Reduction { Sum, Mean, Max, Min, Prod };

// The identity of each reduction, which is also its value over no elements
// (ONNX 18 defines max of nothing as -inf, min as +inf).
template <typename T> T reductionStart(Reduction reduction, ElementKind kind) {
  switch (reduction) {
  case Reduction::Prod:
    return T(1);
  case Reduction::Max:
    if (kind == ElementKind::Bool)
      return T(0);
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  case Reduction::Min:
    if (kind == ElementKind::Bool)
      return T(1);
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  default:
    return T(0);
  }
}

float combine(Reduction reduction, float acc, float x) {
  switch (reduction) {
  case Reduction::Prod:
    return acc * x;
  case Reduction::Max:
    return std::isnan(acc) || std::isnan(x) ? NAN : std::max(acc, x);
  case Reduction::Min:
    return std::isnan(acc) || std::isnan(x) ? NAN : std::min(acc, x);
  default:
    return acc + x;
  }
}

int64_t combine(Reduction reduction, int64_t acc, int64_t x) {
  switch (reduction) {
  case Reduction::Prod:
    return wrapMul(acc, x);
  case Reduction::Max:
    return std::max(acc, x);
  case Reduction::Min:
    return std::min(acc, x);
  default:
    return wrapAdd(acc, x);
  }
}

// Folds every input element into its output slot: the walk reads the input
// in order while `strides` (0 on reduced dims) names the output position.
template <typename T>
void accumulate(Reduction reduction, ElementKind kind, const std::vector<int64_t> &inShape,
                const std::vector<T> &in, const std::vector<int64_t> &strides, std::vector<T> &out,
                int64_t reducedCount) {
  std::fill(out.begin(), out.end(), reductionStart<T>(reduction, kind));
  walkStrided<1>(inShape, {strides}, {0}, [&](int64_t flat, const std::array<int64_t, 1> &at) {
    out[at[0]] = combine(reduction, out[at[0]], in[flat]);
  });
  if (reduction == Reduction::Mean)
    for (T &v : out)
      v = v / static_cast<T>(reducedCount);
}

Results reduce(const FoldContext &context, Reduction reduction) {
  context.requireInputs(1, 2);
  const Tensor &data = context.input(0);
  int64_t rank = static_cast<int64_t>(data.shape.size());
  std::optional<std::vector<int64_t>> axes = context.intsFromInputOrAttribute(1, "axes");
  bool keepDims = context.intAttribute("keepdims", 1) != 0;
  bool allAxes = !axes || axes->empty();
  if (allAxes && context.intAttribute("noop_with_empty_axes", 0) != 0)
    return {convertKind(data, data.kind)};
  bool arithmetic =
      reduction == Reduction::Sum || reduction == Reduction::Mean || reduction == Reduction::Prod;
  if (arithmetic && data.kind == ElementKind::Bool)
    context.fail("arithmetic on booleans");

  std::vector<bool> reduced(rank, allAxes);
  if (!allAxes)
    for (int64_t a : context.axes(*axes, rank))
      reduced[a] = true;
  std::vector<int64_t> keptShape = data.shape, shape;
  int64_t reducedCount = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reducedCount *= data.shape[d];
      keptShape[d] = 1;
    }
    if (!reduced[d] || keepDims)
      shape.push_back(keptShape[d]);
  }
  if (reduction == Reduction::Mean && reducedCount == 0 && data.kind != ElementKind::Float)
    context.fail("integer mean over no elements");

  std::vector<int64_t> strides = stridesOf(keptShape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      strides[d] = 0;
  Tensor out = context.allocate(data.kind, std::move(shape));
  if (data.kind == ElementKind::Float)
    accumulate(reduction, data.kind, data.shape, data.floats, strides, out.floats, reducedCount);
  else
    accumulate(reduction, data.kind, data.shape, data.ints, strides, out.ints, reducedCount);
  return {std::move(out)};
}

Results foldReduceSum(const FoldContext &context) { return reduce(context, Reduction::Sum); }
Results foldReduceMean(const FoldContext &context) { return reduce(context, Reduction::Mean); }
Results foldReduceMax(const FoldContext &context) { return reduce(context, Reduction::Max); }
Results foldReduceMin(const FoldContext &context) { return reduce(context, Reduction::Min); }
Results foldReduceProd(const FoldContext &context) { return reduce(context, Reduction::Prod); }

template <typename T, typename Add>
void cumulativeSum(const std::vector<T> &in, std::vector<T> &out, int64_t outer, int64_t dim,
                   int64_t inner, bool exclusive, bool reverse, Add &&add) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T sum = T(0);
      for (int64_t step = 0; step < dim; ++step) {
        int64_t j = reverse ? dim - 1 - step : step;
        int64_t at = (o * dim + j) * inner + i;
        if (exclusive) {
          out[at] = sum;
          sum = add(sum, in[at]);
        } else {
          sum = add(sum, in[at]);
          out[at] = sum;
        }
      }
    }
}

Results foldCumSum(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &data = context.input(0);
  if (data.kind == ElementKind::Bool)
    context.fail("arithmetic on booleans");
  size_t rank = data.shape.size();
  int64_t axis = context.axis(context.scalarIntInput(1), static_cast<int64_t>(rank));
  bool exclusive = context.intAttribute("exclusive", 0) != 0;
  bool reverse = context.intAttribute("reverse", 0) != 0;
  int64_t outer = productOf(data.shape, 0, axis), inner = productOf(data.shape, axis + 1, rank);
  Tensor out = context.allocate(data.kind, data.shape);
  if (data.kind == ElementKind::Float)
    cumulativeSum(data.floats, out.floats, outer, data.shape[axis], inner, exclusive, reverse,
                  [](float a, float b) { return a + b; });
  else
    cumulativeSum(data.ints, out.ints, outer, data.shape[axis], inner, exclusive, reverse, wrapAdd);
  return {std::move(out)};
}

Results foldSoftmax(const FoldContext &context) {
  context.requireInputs(1, 1);
  const Tensor &data = context.input(0);
  if (data.kind != ElementKind::Float)
    context.fail("needs a float input");
  size_t rank = data.shape.size();
  int64_t axis = context.axis(context.intAttribute("axis", -1), static_cast<int64_t>(rank));
  int64_t outer = productOf(data.shape, 0, axis), inner = productOf(data.shape, axis + 1, rank);
  int64_t dim = data.shape[axis];
  Tensor out = context.allocate(ElementKind::Float, data.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * dim + j) * inner + i; };
      // Subtracting the maximum keeps exp from overflowing.
      float maximum = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < dim; ++j)
        maximum = std::max(maximum, data.floats[at(j)]);
      float sum = 0.0f;
      for (int64_t j = 0; j < dim; ++j) {
        out.floats[at(j)] = std::exp(data.floats[at(j)] - maximum);
        sum += out.floats[at(j)];
      }
      for (int64_t j = 0; j < dim; ++j)
        out.floats[at(j)] /= sum;
    }
  return {std::move(out)};
}

// C[m, n] = sum over k of A[m, k] * B[k, n], for each broadcast batch; the
// k loop sits outside the n loop for locality, keeping each sum in k order.
template <typename T, typename MulAdd>
void multiplyMatrices(const std::vector<int64_t> &batchShape, const std::vector<int64_t> &aBatch,
                      const std::vector<int64_t> &bBatch, const std::vector<T> &a,
                      const std::vector<T> &b, std::vector<T> &c, int64_t m, int64_t k, int64_t n,
                      MulAdd &&mulAdd) {
  std::array<std::vector<int64_t>, 2> strides = {broadcastStrides(aBatch, batchShape),
                                                 broadcastStrides(bBatch, batchShape)};
  walkStrided<2>(batchShape, strides, {0, 0}, [&](int64_t batch, const std::array<int64_t, 2> &at) {
    const T *left = a.data() + at[0] * m * k;
    const T *right = b.data() + at[1] * k * n;
    T *result = c.data() + batch * m * n;
    for (int64_t row = 0; row < m; ++row)
      for (int64_t inner = 0; inner < k; ++inner)
        for (int64_t column = 0; column < n; ++column)
          result[row * n + column] =
              mulAdd(result[row * n + column], left[row * k + inner], right[inner * n + column]);
  });
}

// Numpy matmul: a 1-D left operand is a row vector, a 1-D right operand a
// column vector, and the dims they add are dropped from the result.
Results foldMatMul(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &left = context.input(0), &right = context.input(1);
  if (left.shape.empty() || right.shape.empty())
    context.fail("MatMul operands must have rank 1 or more");
  if (left.kind == ElementKind::Bool || right.kind == ElementKind::Bool)
    context.fail("arithmetic on booleans");
  std::vector<int64_t> aShape = left.shape, bShape = right.shape;
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    context.fail("cannot multiply shapes " + shapeString(left.shape) + " and " +
                 shapeString(right.shape));
  std::vector<int64_t> aBatch(aShape.begin(), aShape.end() - 2);
  std::vector<int64_t> bBatch(bShape.begin(), bShape.end() - 2);
  std::vector<int64_t> batchShape = context.broadcast(aBatch, bBatch);

  std::vector<int64_t> shape = batchShape;
  if (left.shape.size() > 1)
    shape.push_back(m);
  if (right.shape.size() > 1)
    shape.push_back(n);
  // Multiplying two large constant weights would stall the import for
  // minutes; such a graph is better reported than folded.
  if (context.elementCount(shape) * std::max<int64_t>(k, 1) > kMaxMatMulWork)
    context.fail("MatMul of shapes " + shapeString(left.shape) + " and " +
                 shapeString(right.shape) + " is too costly to fold");
  ElementKind kind = joinKinds(left.kind, right.kind);
  Tensor aStorage, bStorage;
  const Tensor &a = asKind(left, kind, aStorage), &b = asKind(right, kind, bStorage);
  Tensor out = context.allocate(kind, std::move(shape));
  if (kind == ElementKind::Float)
    multiplyMatrices(batchShape, aBatch, bBatch, a.floats, b.floats, out.floats, m, k, n,
                     [](float acc, float x, float y) { return acc + x * y; });
  else
    multiplyMatrices(batchShape, aBatch, bBatch, a.ints, b.ints, out.ints, m, k, n,
                     [](int64_t acc, int64_t x, int64_t y) { return wrapAdd(acc, wrapMul(x, y)); });
  return {std::move(out)};
}

} // namespace

void addReductionFolders(FoldTable &table) {
  table.insert({{"ReduceSum", foldReduceSum},
                {"ReduceMean", foldReduceMean},
                {"ReduceMax", foldReduceMax},
                {"ReduceMin", foldReduceMin},
                {"ReduceProd", foldReduceProd},
                {"CumSum", foldCumSum},
                {"Softmax", foldSoftmax},
                {"MatMul", foldMatMul}});
}

} // namespace mk::onnx_import::folding
