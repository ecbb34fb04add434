#include "frontends/onnx/Tensor.h"

namespace mk::onnx_import {

Tensor Tensor::floatScalar(float value) {
  Tensor t;
  t.floats = {value};
  return t;
}

Tensor Tensor::intVector(std::vector<int64_t> values) {
  Tensor t;
  t.kind = ElementKind::Int;
  t.shape = {static_cast<int64_t>(values.size())};
  t.ints = std::move(values);
  return t;
}

Tensor Tensor::filled(ElementKind kind, std::vector<int64_t> shape, double value) {
  Tensor t;
  t.kind = kind;
  t.shape = std::move(shape);
  int64_t n = numElementsOf(t.shape);
  if (kind == ElementKind::Float)
    t.floats.assign(n, static_cast<float>(value));
  else
    t.ints.assign(n, static_cast<int64_t>(value));
  return t;
}

int64_t Tensor::numElements() const { return numElementsOf(shape); }

Tensor materializeTensor(const Tensor &tensor) {
  Tensor read = tensor;
  if (!tensor.lazy)
    return read;
  read.floats.resize(static_cast<size_t>(tensor.numElements()));
  tensor.lazy->read(0, read.floats.size(), read.floats.data());
  read.lazy.reset();
  return read;
}

double Tensor::at(int64_t i) const {
  return kind == ElementKind::Float ? static_cast<double>(floats[i]) : static_cast<double>(ints[i]);
}

void Tensor::set(int64_t i, double value) {
  if (kind == ElementKind::Float)
    floats[i] = static_cast<float>(value);
  else if (kind == ElementKind::Bool)
    ints[i] = value != 0;
  else
    ints[i] = static_cast<int64_t>(value);
}

std::vector<int64_t> Tensor::asInts() const {
  std::vector<int64_t> out(numElements());
  for (int64_t i = 0; i < numElements(); ++i)
    out[i] = kind == ElementKind::Float ? static_cast<int64_t>(floats[i]) : ints[i];
  return out;
}

int64_t numElementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

bool broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                     std::vector<int64_t> &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

int64_t broadcastIndex(int64_t outIndex, const std::vector<int64_t> &to,
                       const std::vector<int64_t> &from) {
  int64_t index = 0, stride = 1;
  size_t offset = to.size() - from.size();
  for (int64_t i = static_cast<int64_t>(to.size()) - 1; i >= 0; --i) {
    int64_t coordinate = outIndex % to[i];
    outIndex /= to[i];
    if (static_cast<size_t>(i) < offset)
      continue;
    int64_t dim = from[i - offset];
    if (dim != 1)
      index += coordinate * stride;
    stride *= dim;
  }
  return index;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

} // namespace mk::onnx_import
