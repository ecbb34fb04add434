#include "frontends/onnx/OpAttributes.h"

#include "onnx.pb.h"

#include <map>
#include <vector>

namespace mk::onnx_import {

namespace {

enum AttributeType { Int, Float, Ints, Floats, String, Strings, Tensor, SparseTensor };

struct AttributeSpec {
  const char *name;
  AttributeType type;
  bool required; // in every supported opset
};

// Made by scripts/onnx_attribute_table.py from onnx's schemas (opsets 13 to
// 23, the union of each op's attributes over them); SimplifiedLayerNormalization
// is onnxruntime's, by hand.
const std::map<std::string, std::vector<AttributeSpec>> &attributeTable() {
  static const std::map<std::string, std::vector<AttributeSpec>> table = {
    {"Abs", {}},
    {"Add", {}},
    {"And", {}},
    {"Attention", {{"is_causal", Int, false}, {"kv_num_heads", Int, false}, {"q_num_heads", Int, false}, {"qk_matmul_output_mode", Int, false}, {"scale", Float, false}, {"softcap", Float, false}, {"softmax_precision", Int, false}}},
    {"Cast", {{"saturate", Int, false}, {"to", Int, true}}},
    {"CastLike", {{"saturate", Int, false}}},
    {"Ceil", {}},
    {"Concat", {{"axis", Int, true}}},
    {"Constant", {{"sparse_value", SparseTensor, false}, {"value", Tensor, false}, {"value_float", Float, false}, {"value_floats", Floats, false}, {"value_int", Int, false}, {"value_ints", Ints, false}, {"value_string", String, false}, {"value_strings", Strings, false}}},
    {"ConstantOfShape", {{"value", Tensor, false}}},
    {"Cos", {}},
    {"CumSum", {{"exclusive", Int, false}, {"reverse", Int, false}}},
    {"Div", {}},
    {"Equal", {}},
    {"Exp", {}},
    {"Expand", {}},
    {"Flatten", {{"axis", Int, false}}},
    {"Floor", {}},
    {"Gather", {{"axis", Int, false}}},
    {"GatherElements", {{"axis", Int, false}}},
    {"GatherND", {{"batch_dims", Int, false}}},
    {"Gemm", {{"alpha", Float, false}, {"beta", Float, false}, {"transA", Int, false}, {"transB", Int, false}}},
    {"Greater", {}},
    {"GreaterOrEqual", {}},
    {"Identity", {}},
    {"IsInf", {{"detect_negative", Int, false}, {"detect_positive", Int, false}}},
    {"IsNaN", {}},
    {"Less", {}},
    {"LessOrEqual", {}},
    {"Log", {}},
    {"MatMul", {}},
    {"Max", {}},
    {"Min", {}},
    {"Mod", {{"fmod", Int, false}}},
    {"Mul", {}},
    {"Neg", {}},
    {"Not", {}},
    {"Or", {}},
    {"Pow", {}},
    {"RMSNormalization", {{"axis", Int, false}, {"epsilon", Float, false}, {"stash_type", Int, false}}},
    {"Range", {}},
    {"Reciprocal", {}},
    {"ReduceMax", {{"axes", Ints, false}, {"keepdims", Int, false}, {"noop_with_empty_axes", Int, false}}},
    {"ReduceMean", {{"axes", Ints, false}, {"keepdims", Int, false}, {"noop_with_empty_axes", Int, false}}},
    {"ReduceMin", {{"axes", Ints, false}, {"keepdims", Int, false}, {"noop_with_empty_axes", Int, false}}},
    {"ReduceProd", {{"axes", Ints, false}, {"keepdims", Int, false}, {"noop_with_empty_axes", Int, false}}},
    {"ReduceSum", {{"keepdims", Int, false}, {"noop_with_empty_axes", Int, false}}},
    {"Relu", {}},
    {"Reshape", {{"allowzero", Int, false}}},
    {"RotaryEmbedding", {{"interleaved", Int, false}, {"num_heads", Int, false}, {"rotary_embedding_dim", Int, false}}},
    {"ScatterND", {{"reduction", String, false}}},
    {"Shape", {{"end", Int, false}, {"start", Int, false}}},
    {"Sigmoid", {}},
    {"SimplifiedLayerNormalization", {{"axis", Int, false}, {"epsilon", Float, false}, {"stash_type", Int, false}}},
    {"Sin", {}},
    {"Size", {}},
    {"Slice", {}},
    {"Softmax", {{"axis", Int, false}}},
    {"Split", {{"axis", Int, false}, {"num_outputs", Int, false}}},
    {"Sqrt", {}},
    {"Squeeze", {}},
    {"Sub", {}},
    {"Sum", {}},
    {"Tanh", {}},
    {"Tile", {}},
    {"Transpose", {{"perm", Ints, false}}},
    {"Trilu", {{"upper", Int, false}}},
    {"Unsqueeze", {}},
    {"Where", {}},
    {"Xor", {}},
  };
  return table;
}

onnx::AttributeProto::AttributeType protoTypeOf(AttributeType type) {
  using AP = onnx::AttributeProto;
  switch (type) {
  case Int:
    return AP::INT;
  case Float:
    return AP::FLOAT;
  case Ints:
    return AP::INTS;
  case Floats:
    return AP::FLOATS;
  case String:
    return AP::STRING;
  case Strings:
    return AP::STRINGS;
  case Tensor:
    return AP::TENSOR;
  case SparseTensor:
    return AP::SPARSE_TENSOR;
  }
  return AP::UNDEFINED;
}

std::string typeName(int type) {
  const std::string &name = onnx::AttributeProto::AttributeType_Name(
      static_cast<onnx::AttributeProto::AttributeType>(type));
  return name.empty() ? "type " + std::to_string(type) : name;
}

std::string knownNames(const std::vector<AttributeSpec> &specs) {
  if (specs.empty())
    return "it has none";
  std::string names;
  for (const AttributeSpec &spec : specs)
    names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return "it has " + names;
}

} // namespace

std::string checkAttributes(const onnx::NodeProto &node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return "";
  auto found = attributeTable().find(node.op_type());
  if (found == attributeTable().end())
    return "";
  const std::vector<AttributeSpec> &specs = found->second;
  std::map<std::string, int> seen;
  for (const onnx::AttributeProto &attribute : node.attribute()) {
    const AttributeSpec *spec = nullptr;
    for (const AttributeSpec &candidate : specs)
      if (attribute.name() == candidate.name)
        spec = &candidate;
    if (!spec)
      return "attribute '" + attribute.name() + "' is not an attribute of " + node.op_type() +
             " (" + knownNames(specs) + ")";
    if (++seen[attribute.name()] > 1)
      return "attribute '" + attribute.name() + "' is given twice";
    // A type of 0 (UNDEFINED) is what old writers left; the value's field
    // then says nothing either, so it is refused too.
    if (attribute.type() != protoTypeOf(spec->type))
      return "attribute '" + attribute.name() + "' is " + typeName(attribute.type()) +
             ", ONNX defines it as " + typeName(protoTypeOf(spec->type));
  }
  for (const AttributeSpec &spec : specs)
    if (spec.required && !seen.count(spec.name))
      return "the required attribute '" + std::string(spec.name) + "' is missing";
  return "";
}

} // namespace mk::onnx_import
