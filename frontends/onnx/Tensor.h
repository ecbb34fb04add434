// A constant tensor as the importer folds it: initializers, Constant nodes and
// everything computed from them (shapes, masks, scales). Small tensors are the
// common case; weights are the large ones and remember which initializer they
// came from, so the weight table can name them and share tied copies.
#ifndef MKC_FRONTENDS_ONNX_TENSOR_H
#define MKC_FRONTENDS_ONNX_TENSOR_H

#include "core/weights/WeightTable.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mk::onnx_import {

enum class ElementKind { Float, Int, Bool };

struct Tensor {
  ElementKind kind = ElementKind::Float;
  std::vector<int64_t> shape;
  std::vector<float> floats; // kind == Float
  std::vector<int64_t> ints; // kind == Int or Bool (0 or 1)
  // Set for a big initializer of external data, whose values are read only
  // when the .mk is written (LazyValues.h): `floats` is then empty.
  std::shared_ptr<const WeightValues> lazy;

  // Set for initializers and kept through Identity, Cast and 2-D Transpose.
  std::string origin;
  bool originTransposed = false;
  StorageType storage = StorageType::F32;

  static Tensor floatScalar(float value);
  static Tensor intVector(std::vector<int64_t> values);
  static Tensor filled(ElementKind kind, std::vector<int64_t> shape, double value);

  int64_t numElements() const;
  bool isLazy() const { return lazy != nullptr; }
  bool isScalarLike() const { return numElements() == 1; }
  // Element i as a double, whatever the kind.
  double at(int64_t i) const;
  void set(int64_t i, double value);
  // The values as int64, for shape and index inputs.
  std::vector<int64_t> asInts() const;
};

// A lazy tensor with its values read into `floats` (Tensor::lazy unset);
// any other tensor as it is. Throws std::runtime_error when reading fails.
Tensor materializeTensor(const Tensor &tensor);

int64_t numElementsOf(const std::vector<int64_t> &shape);
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape);
// Numpy-style broadcast of two shapes; empty optional-like flag on mismatch.
bool broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                     std::vector<int64_t> &out);
// Index into a tensor of shape `from` for the element at `outIndex` of the
// broadcast shape `to`.
int64_t broadcastIndex(int64_t outIndex, const std::vector<int64_t> &to,
                       const std::vector<int64_t> &from);
// Normalizes a possibly negative axis against a rank; -1 if out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

} // namespace mk::onnx_import

#endif
