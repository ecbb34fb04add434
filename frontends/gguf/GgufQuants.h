// Dequantization of a tensor's raw ggml bytes into f32, for the types in
// GgmlType. Each block layout follows ggml's (ggml-common.h's block_q4_0 and
// friends), and each value is computed in ggml's order of operations, in
// f32, so the results equal ggml's and gguf-py's bit for bit (this file is
// compiled without contracting a*b+c into an FMA, which would round once
// where they round twice).
#ifndef MKC_FRONTENDS_GGUF_GGUFQUANTS_H
#define MKC_FRONTENDS_GGUF_GGUFQUANTS_H

#include "frontends/gguf/GgufTypes.h"

#include <cstdint>
#include <span>
#include <string>

namespace mk {

struct GgufTensor;

// IEEE half and bfloat16, widened exactly (NaNs keep sign and payload, and
// are made quiet).
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);

// Whether `code` is one of the ggml types dequantized here, which are:
bool canDequantize(uint32_t code);
inline constexpr const char *kDequantizedTypes =
    "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS";

// Fills `out` (one float per element) from `raw`: "" or why not (a type not
// dequantized here, or sizes that disagree with the type's blocks).
std::string dequantize(uint32_t code, std::span<const uint8_t> raw, std::span<float> out);

// A tensor of a parsed file, its error naming the tensor.
std::string dequantizeTensor(const GgufTensor &tensor, std::span<float> out);

} // namespace mk

#endif
