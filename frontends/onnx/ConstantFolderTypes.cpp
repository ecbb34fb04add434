// Ops that create tensors or change their element type: Constant,
// ConstantOfShape, Cast and CastLike, with the TensorProto decoding and the
// f16/bf16 rounding they need.
#include "frontends/onnx/ConstantFolder.h"

#include "frontends/onnx/ConstantFolderInternal.h"
#include "frontends/onnx/ImportError.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace mk::onnx_import {
namespace folding {
namespace {

// ONNX TensorProto.DataType codes past the ones Debian's onnx.proto names.
constexpr int kUint4 = 21;
constexpr int kInt4 = 22;

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Round-to-nearest-even, as a hardware f32->f16 conversion does.
uint16_t floatToHalf(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  float magnitude = std::fabs(value);
  if (std::isnan(value))
    return sign | 0x7e00;
  if (magnitude >= 65520.0f)
    return sign | 0x7c00;
  if (magnitude < 6.103515625e-05f) {
    // Subnormal: a multiple of 2^-24, rounded to even by nearbyint.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24)));
  }
  uint32_t abs = bits & 0x7fffffffu;
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded >> 13) - (112u << 10));
}

float bfloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBfloat16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// Bits and signedness of the integer ONNX types, for wrap-around on Cast.
std::pair<int, bool> integerWidth(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::UINT8:
    return {8, false};
  case onnx::TensorProto::INT8:
    return {8, true};
  case onnx::TensorProto::UINT16:
    return {16, false};
  case onnx::TensorProto::INT16:
    return {16, true};
  case onnx::TensorProto::INT32:
    return {32, true};
  case onnx::TensorProto::UINT32:
    return {32, false};
  case kUint4:
    return {4, false};
  case kInt4:
    return {4, true};
  default:
    return {64, true};
  }
}

int64_t wrapToWidth(int64_t value, int bits, bool isSigned) {
  if (bits == 64)
    return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t wrapped = static_cast<uint64_t>(value) & mask;
  if (isSigned && (wrapped >> (bits - 1)) & 1u)
    wrapped |= ~mask;
  return static_cast<int64_t>(wrapped);
}

StorageType storageOfOnnxType(int onnxType) {
  if (onnxType == onnx::TensorProto::FLOAT16)
    return StorageType::F16;
  if (onnxType == onnx::TensorProto::BFLOAT16)
    return StorageType::BF16;
  return StorageType::F32;
}

// Rounds float values to what the ONNX float type can hold, since a Cast to
// f16 in the graph changes the values onnxruntime computes with afterwards.
void roundToFloatType(std::vector<float> &values, int onnxType) {
  if (onnxType == onnx::TensorProto::FLOAT16)
    for (float &v : values)
      v = halfToFloat(floatToHalf(v));
  else if (onnxType == onnx::TensorProto::BFLOAT16)
    for (float &v : values)
      v = bfloat16ToFloat(floatToBfloat16(v));
}

void copyProvenance(const Tensor &from, Tensor &to) {
  to.origin = from.origin;
  to.originTransposed = from.originTransposed;
  to.storage = from.storage;
}

Tensor castTo(const FoldContext &context, const Tensor &input, int onnxType) {
  ElementKind kind = elementKindOfOnnxType(onnxType, context.node());
  Tensor out = convertKind(input, kind);
  if (kind == ElementKind::Float) {
    roundToFloatType(out.floats, onnxType);
    if (input.kind == ElementKind::Float)
      copyProvenance(input, out);
  } else if (kind == ElementKind::Int) {
    auto [bits, isSigned] = integerWidth(onnxType);
    for (int64_t &v : out.ints)
      v = wrapToWidth(v, bits, isSigned);
  }
  return out;
}

Results foldCast(const FoldContext &context) {
  context.requireInputs(1, 1);
  const onnx::AttributeProto *to = context.attribute("to");
  if (!to)
    context.fail("missing attribute 'to'");
  return {castTo(context, context.input(0), static_cast<int>(to->i()))};
}

Results foldCastLike(const FoldContext &context) {
  context.requireInputs(2, 2);
  const Tensor &input = context.input(0);
  Tensor out = convertKind(input, context.input(1).kind);
  if (input.kind == ElementKind::Float && out.kind == ElementKind::Float)
    copyProvenance(input, out);
  return {std::move(out)};
}

template <typename T>
std::vector<T> decodeRaw(const FoldContext &context, const std::string &raw, int64_t count) {
  if (raw.size() != static_cast<size_t>(count) * sizeof(T))
    context.fail("tensor raw_data has " + std::to_string(raw.size()) + " bytes, expected " +
                 std::to_string(count * static_cast<int64_t>(sizeof(T))));
  std::vector<T> values(count);
  if (count)
    std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

template <typename Field>
void checkFieldSize(const FoldContext &context, const Field &field, int64_t count) {
  if (field.size() != count)
    context.fail("tensor holds " + std::to_string(field.size()) + " values, its shape needs " +
                 std::to_string(count));
}

// Stores values in the tensor's own element vector; integers never pass
// through double, so INT64_MAX (a common Slice end) stays exact.
template <typename Values> void storeValues(Tensor &tensor, const Values &values) {
  if (tensor.kind == ElementKind::Float)
    tensor.floats.assign(values.begin(), values.end());
  else
    tensor.ints.assign(values.begin(), values.end());
}

// f16 and bf16 travel as raw 16-bit words or, when not raw, in int32_data.
void decodeHalfWords(const FoldContext &context, const onnx::TensorProto &proto, Tensor &tensor,
                     float (*convert)(uint16_t)) {
  int64_t count = tensor.numElements();
  std::vector<uint16_t> words;
  if (proto.has_raw_data()) {
    words = decodeRaw<uint16_t>(context, proto.raw_data(), count);
  } else {
    checkFieldSize(context, proto.int32_data(), count);
    for (int32_t word : proto.int32_data())
      words.push_back(static_cast<uint16_t>(word));
  }
  tensor.floats.resize(count);
  for (int64_t i = 0; i < count; ++i)
    tensor.floats[i] = convert(words[i]);
}

template <typename T, typename Field>
void decodeTyped(const FoldContext &context, const onnx::TensorProto &proto, Tensor &tensor,
                 const Field &field) {
  int64_t count = tensor.numElements();
  if (proto.has_raw_data()) {
    storeValues(tensor, decodeRaw<T>(context, proto.raw_data(), count));
    return;
  }
  checkFieldSize(context, field, count);
  storeValues(tensor, field);
}

// raw_data is little-endian, as on every host this compiler runs on.
void decodeInto(const FoldContext &context, const onnx::TensorProto &proto, Tensor &tensor) {
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT:
    return decodeTyped<float>(context, proto, tensor, proto.float_data());
  case onnx::TensorProto::DOUBLE:
    return decodeTyped<double>(context, proto, tensor, proto.double_data());
  case onnx::TensorProto::FLOAT16:
    return decodeHalfWords(context, proto, tensor, halfToFloat);
  case onnx::TensorProto::BFLOAT16:
    return decodeHalfWords(context, proto, tensor, bfloat16ToFloat);
  case onnx::TensorProto::INT64:
    return decodeTyped<int64_t>(context, proto, tensor, proto.int64_data());
  case onnx::TensorProto::UINT64:
    return decodeTyped<uint64_t>(context, proto, tensor, proto.uint64_data());
  case onnx::TensorProto::UINT32:
    return decodeTyped<uint32_t>(context, proto, tensor, proto.uint64_data());
  // The narrower integer types and bool share int32_data when not raw.
  case onnx::TensorProto::INT32:
    return decodeTyped<int32_t>(context, proto, tensor, proto.int32_data());
  case onnx::TensorProto::INT16:
    return decodeTyped<int16_t>(context, proto, tensor, proto.int32_data());
  case onnx::TensorProto::UINT16:
    return decodeTyped<uint16_t>(context, proto, tensor, proto.int32_data());
  case onnx::TensorProto::INT8:
    return decodeTyped<int8_t>(context, proto, tensor, proto.int32_data());
  case onnx::TensorProto::UINT8:
    return decodeTyped<uint8_t>(context, proto, tensor, proto.int32_data());
  case onnx::TensorProto::BOOL:
    decodeTyped<uint8_t>(context, proto, tensor, proto.int32_data());
    for (int64_t &v : tensor.ints)
      v = v != 0;
    return;
  default:
    context.fail("tensor attribute of data type " + std::to_string(proto.data_type()) +
                 " cannot be folded");
  }
}

Tensor tensorFromProto(const FoldContext &context, const onnx::TensorProto &proto) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    context.fail("tensor attribute with external data cannot be folded");
  ElementKind kind = elementKindOfOnnxType(proto.data_type(), context.node());
  Tensor tensor;
  tensor.kind = kind;
  tensor.shape.assign(proto.dims().begin(), proto.dims().end());
  context.elementCount(tensor.shape);
  decodeInto(context, proto, tensor);
  if (kind == ElementKind::Float)
    tensor.storage = storageOfOnnxType(proto.data_type());
  return tensor;
}

Results foldConstant(const FoldContext &context) {
  context.requireInputs(0, 0);
  if (context.node().attribute_size() != 1)
    context.fail("Constant needs exactly one value attribute");
  const onnx::AttributeProto &attribute = context.node().attribute(0);
  const std::string &name = attribute.name();
  if (name == "value")
    return {tensorFromProto(context, attribute.t())};
  if (name == "value_float")
    return {Tensor::floatScalar(attribute.f())};
  if (name == "value_floats") {
    Tensor tensor;
    tensor.floats.assign(attribute.floats().begin(), attribute.floats().end());
    tensor.shape = {static_cast<int64_t>(tensor.floats.size())};
    return {std::move(tensor)};
  }
  if (name == "value_int") {
    Tensor tensor = Tensor::intVector({attribute.i()});
    tensor.shape.clear();
    return {std::move(tensor)};
  }
  if (name == "value_ints")
    return {Tensor::intVector({attribute.ints().begin(), attribute.ints().end()})};
  context.fail("Constant attribute '" + name + "' cannot be folded");
}

Results foldConstantOfShape(const FoldContext &context) {
  context.requireInputs(1, 1);
  const Tensor &shapeInput = context.input(0);
  if (shapeInput.shape.size() != 1)
    context.fail("shape input must be 1-D, has shape " + shapeString(shapeInput.shape));
  Tensor fill = Tensor::floatScalar(0.0f);
  if (const onnx::AttributeProto *value = context.attribute("value")) {
    fill = tensorFromProto(context, value->t());
    if (fill.numElements() != 1)
      context.fail("attribute 'value' must hold one element");
  }
  Tensor out = context.allocate(fill.kind, shapeInput.asInts());
  withSameData(fill, out,
               [](const auto &from, auto &to) { std::fill(to.begin(), to.end(), from[0]); });
  return {std::move(out)};
}

} // namespace

void addTypeFolders(FoldTable &table) {
  table.insert({{"Cast", foldCast},
                {"CastLike", foldCastLike},
                {"Constant", foldConstant},
                {"ConstantOfShape", foldConstantOfShape}});
}

} // namespace folding

ElementKind elementKindOfOnnxType(int onnxType, const onnx::NodeProto &node) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::DOUBLE:
    return ElementKind::Float;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
  case folding::kUint4:
  case folding::kInt4:
    return ElementKind::Int;
  case onnx::TensorProto::BOOL:
    return ElementKind::Bool;
  default:
    failAt(node, "ONNX data type " + std::to_string(onnxType) + " is not supported");
  }
}

} // namespace mk::onnx_import
