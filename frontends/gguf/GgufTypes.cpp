#include "frontends/gguf/GgufTypes.h"

namespace mk {

namespace {

// Block sizes as ggml defines them (ggml.c's type_traits, and gguf-py's
// GGML_QUANT_SIZES, which mirrors it).
constexpr GgmlTypeInfo kGgmlTypes[] = {
    {0, "F32", 1, 4},          {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},       {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},       {9, "Q8_1", 32, 40},      {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},    {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},    {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},   {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},    {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136},  {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},         {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},    {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
    {35, "TQ2_0", 256, 66},    {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},
    {41, "Q1_0", 128, 18},
};

} // namespace

std::optional<GgufValueType> ggufValueType(uint32_t code) {
  if (code > static_cast<uint32_t>(GgufValueType::Float64))
    return std::nullopt;
  return static_cast<GgufValueType>(code);
}

const char *ggufValueTypeName(GgufValueType type) {
  switch (type) {
  case GgufValueType::Uint8: return "uint8";
  case GgufValueType::Int8: return "int8";
  case GgufValueType::Uint16: return "uint16";
  case GgufValueType::Int16: return "int16";
  case GgufValueType::Uint32: return "uint32";
  case GgufValueType::Int32: return "int32";
  case GgufValueType::Float32: return "float32";
  case GgufValueType::Bool: return "bool";
  case GgufValueType::String: return "string";
  case GgufValueType::Array: return "array";
  case GgufValueType::Uint64: return "uint64";
  case GgufValueType::Int64: return "int64";
  case GgufValueType::Float64: return "float64";
  }
  return "unknown";
}

uint32_t ggufValueBytes(GgufValueType type) {
  switch (type) {
  case GgufValueType::Uint8:
  case GgufValueType::Int8:
  case GgufValueType::Bool:
    return 1;
  case GgufValueType::Uint16:
  case GgufValueType::Int16:
    return 2;
  case GgufValueType::Uint32:
  case GgufValueType::Int32:
  case GgufValueType::Float32:
    return 4;
  case GgufValueType::Uint64:
  case GgufValueType::Int64:
  case GgufValueType::Float64:
    return 8;
  case GgufValueType::String:
  case GgufValueType::Array:
    return 0;
  }
  return 0;
}

const GgmlTypeInfo *ggmlTypeInfo(uint32_t code) {
  for (const GgmlTypeInfo &info : kGgmlTypes)
    if (info.code == code)
      return &info;
  return nullptr;
}

std::string ggmlTypeName(uint32_t code) {
  const GgmlTypeInfo *info = ggmlTypeInfo(code);
  return info ? std::string(info->name) : "type " + std::to_string(code);
}

} // namespace mk
