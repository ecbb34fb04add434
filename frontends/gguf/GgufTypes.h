// The two kinds of type a GGUF file names by number: the type of a metadata
// value, and the ggml type of a tensor's data (its block of elements and the
// bytes each block takes). Sizes of every ggml type llama.cpp writes are
// known here, so that any llama.cpp file can be checked and summarized; only
// some of them can be dequantized (GgufQuants.h).
#ifndef MKC_FRONTENDS_GGUF_GGUFTYPES_H
#define MKC_FRONTENDS_GGUF_GGUFTYPES_H

#include <cstdint>
#include <optional>
#include <string>

namespace mk {

enum class GgufValueType : uint32_t {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
};

// The value type with this code, or nothing for a code the spec does not define.
std::optional<GgufValueType> ggufValueType(uint32_t code);

// "uint32", "string", "array", ...: the spec's names.
const char *ggufValueTypeName(GgufValueType type);

// The bytes of one value of a fixed-size type; 0 for string and array.
uint32_t ggufValueBytes(GgufValueType type);

// The ggml types dequantized here; every other known type is only sized.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
};

struct GgmlTypeInfo {
  uint32_t code;
  const char *name;       // ggml's name: "Q4_K"
  uint32_t blockElements; // weights per block (1 for plain floats)
  uint32_t blockBytes;    // bytes per block
};

// The known ggml type with this code, or nullptr (unknown, or retired like 4 and 5).
const GgmlTypeInfo *ggmlTypeInfo(uint32_t code);

// "Q4_K", or "type 99" for an unknown code.
std::string ggmlTypeName(uint32_t code);

} // namespace mk

#endif
