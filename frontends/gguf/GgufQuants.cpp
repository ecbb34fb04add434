#include "frontends/gguf/GgufQuants.h"

#include "frontends/gguf/GgufFile.h"

#include <bit>
#include <cstring>

namespace mk {

namespace {

uint16_t loadU16(const uint8_t *p) { return uint16_t(p[0] | (p[1] << 8)); }
float loadHalf(const uint8_t *p) { return halfToFloat(loadU16(p)); }

// Q4_0: f16 d, then 16 bytes; byte j holds element j (low nibble) and
// element j + 16 (high nibble). value = (q - 8) * d.
void blockQ4_0(const uint8_t *block, float *out) {
  float d = loadHalf(block);
  const uint8_t *qs = block + 2;
  for (int j = 0; j < 16; ++j) {
    out[j] = float(int(qs[j] & 0x0f) - 8) * d;
    out[j + 16] = float(int(qs[j] >> 4) - 8) * d;
  }
}

// Q4_1: f16 d, f16 m, then nibbles as in Q4_0. value = q * d + m.
void blockQ4_1(const uint8_t *block, float *out) {
  float d = loadHalf(block), m = loadHalf(block + 2);
  const uint8_t *qs = block + 4;
  for (int j = 0; j < 16; ++j) {
    out[j] = float(qs[j] & 0x0f) * d + m;
    out[j + 16] = float(qs[j] >> 4) * d + m;
  }
}

// Q5_0 and Q5_1's fifth bits: bit j of the little-endian u32 qh is
// element j's.
uint32_t fifthBits(const uint8_t *qh) {
  return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

// Q5_0: f16 d, 4 bytes of fifth bits, then nibbles as in Q4_0.
// value = (q - 16) * d.
void blockQ5_0(const uint8_t *block, float *out) {
  float d = loadHalf(block);
  uint32_t qh = fifthBits(block + 2);
  const uint8_t *qs = block + 6;
  for (int j = 0; j < 16; ++j) {
    int low = (qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
    int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    out[j] = float(low - 16) * d;
    out[j + 16] = float(high - 16) * d;
  }
}

// Q5_1: f16 d, f16 m, 4 bytes of fifth bits, then nibbles as in Q4_0.
// value = q * d + m.
void blockQ5_1(const uint8_t *block, float *out) {
  float d = loadHalf(block), m = loadHalf(block + 2);
  uint32_t qh = fifthBits(block + 4);
  const uint8_t *qs = block + 8;
  for (int j = 0; j < 16; ++j) {
    int low = (qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
    int high = (qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    out[j] = float(low) * d + m;
    out[j + 16] = float(high) * d + m;
  }
}

// Q8_0: f16 d, then 32 int8. value = q * d.
void blockQ8_0(const uint8_t *block, float *out) {
  float d = loadHalf(block);
  for (int j = 0; j < 32; ++j)
    out[j] = float(int8_t(block[2 + j])) * d;
}

// Q4_K's 12 bytes of scales hold 8 six-bit scales and 8 six-bit mins: for
// sub-block j < 4 the low 6 bits of bytes j (scale) and j + 4 (min); for
// j >= 4 the nibbles of byte j + 4 (scale low, min high) with the top two
// bits of bytes j - 4 (scale) and j (min) above them.
void scaleMinQ4_K(const uint8_t *scales, int j, int &scale, int &min) {
  if (j < 4) {
    scale = scales[j] & 63;
    min = scales[j + 4] & 63;
  } else {
    scale = (scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4);
    min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// Q4_K: 256 weights in 8 sub-blocks of 32: f16 d, f16 dmin, 12 bytes of
// scales and mins, 128 bytes of nibbles. Each 32 bytes of nibbles hold two
// sub-blocks: low nibbles the first, high nibbles the second.
// value = (d * scale) * q - (dmin * min).
void blockQ4_K(const uint8_t *block, float *out) {
  float d = loadHalf(block), dmin = loadHalf(block + 2);
  const uint8_t *scales = block + 4;
  const uint8_t *qs = block + 16;
  for (int pair = 0; pair < 4; ++pair) {
    int scale0, min0, scale1, min1;
    scaleMinQ4_K(scales, 2 * pair, scale0, min0);
    scaleMinQ4_K(scales, 2 * pair + 1, scale1, min1);
    float d0 = d * float(scale0), m0 = dmin * float(min0);
    float d1 = d * float(scale1), m1 = dmin * float(min1);
    const uint8_t *q = qs + 32 * pair;
    float *y = out + 64 * pair;
    for (int l = 0; l < 32; ++l) {
      y[l] = d0 * float(q[l] & 0x0f) - m0;
      y[l + 32] = d1 * float(q[l] >> 4) - m1;
    }
  }
}

// Q2_K: 256 weights in 16 sub-blocks of 16: 16 bytes of scales (a 4-bit
// scale low, a 4-bit min high, one a sub-block), 64 bytes of 2-bit q, f16 d,
// f16 dmin. Each 32 bytes of q hold 128 weights: weight 32 s + l of the
// half takes bits 2s..2s+1 of byte l. value = (d * scale) * q - (dmin * min).
void blockQ2_K(const uint8_t *block, float *out) {
  const uint8_t *scales = block, *qs = block + 16;
  float d = loadHalf(block + 80), dmin = loadHalf(block + 82);
  for (int sub = 0; sub < 16; ++sub) {
    float dl = d * float(scales[sub] & 0x0f), ml = dmin * float(scales[sub] >> 4);
    for (int index = 16 * sub; index < 16 * sub + 16; ++index) {
      int half = index / 128, s = index % 128 / 32, l = index % 32;
      int q = (qs[32 * half + l] >> (2 * s)) & 3;
      out[index] = dl * float(q) - ml;
    }
  }
}

// Q3_K: 256 weights in 16 sub-blocks of 16: 32 bytes of high-bit mask, 64
// bytes of 2-bit q (laid out as Q2_K's), 12 bytes of 16 six-bit scales,
// f16 d. Scale i's low 4 bits are byte i's low nibble (i < 8) or byte
// i - 8's high nibble, its top 2 bits bits 2 (i / 4)..+1 of byte 8 + i % 4;
// it is offset by 32. Weight 32 k + l's high bit is bit k of mask byte l; a
// clear bit subtracts 4. value = (d * (scale - 32)) * (q - (bit ? 0 : 4)).
void blockQ3_K(const uint8_t *block, float *out) {
  const uint8_t *hmask = block, *qs = block + 32, *scales = block + 96;
  float d = loadHalf(block + 108);
  for (int i = 0; i < 16; ++i) {
    int low = i < 8 ? scales[i] & 0x0f : scales[i - 8] >> 4;
    int high = (scales[8 + i % 4] >> (2 * (i / 4))) & 3;
    float dl = d * float((low | high << 4) - 32);
    for (int index = 16 * i; index < 16 * i + 16; ++index) {
      int half = index / 128, s = index % 128 / 32, l = index % 32;
      int q = (qs[32 * half + l] >> (2 * s)) & 3;
      if (!((hmask[l] >> (index / 32)) & 1))
        q -= 4;
      out[index] = dl * float(q);
    }
  }
}

// Q5_K: Q4_K's d, dmin, scales and mins, then 32 bytes of fifth bits and
// 128 bytes of nibbles laid out as Q4_K's. Weight 32 k + l's fifth bit is
// bit k of byte l. value = (d * scale) * q - (dmin * min).
void blockQ5_K(const uint8_t *block, float *out) {
  float d = loadHalf(block), dmin = loadHalf(block + 2);
  const uint8_t *scales = block + 4, *qh = block + 16, *qs = block + 48;
  for (int sub = 0; sub < 8; ++sub) {
    int scale, min;
    scaleMinQ4_K(scales, sub, scale, min);
    float dl = d * float(scale), ml = dmin * float(min);
    const uint8_t *q = qs + 32 * (sub / 2);
    for (int l = 0; l < 32; ++l) {
      int low = sub % 2 == 0 ? q[l] & 0x0f : q[l] >> 4;
      int value = low | ((qh[l] >> sub) & 1) << 4;
      out[32 * sub + l] = dl * float(value) - ml;
    }
  }
}

// The 16 levels of IQ4_NL and IQ4_XS's nibbles (ggml's kvalues_iq4nl).
constexpr int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                   1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL: f16 d, then nibbles as in Q4_0, each a level. value = d * level.
void blockIQ4_NL(const uint8_t *block, float *out) {
  float d = loadHalf(block);
  const uint8_t *qs = block + 2;
  for (int j = 0; j < 16; ++j) {
    out[j] = d * float(kIq4Levels[qs[j] & 0x0f]);
    out[j + 16] = d * float(kIq4Levels[qs[j] >> 4]);
  }
}

// IQ4_XS: 256 weights in 8 sub-blocks of 32: f16 d, a u16 of the scales'
// top 2 bits (2 a sub-block), 4 bytes of their low 4 bits (a nibble a
// sub-block), then 16 bytes of nibbles a sub-block as in IQ4_NL. Scales are
// offset by 32. value = (d * (scale - 32)) * level.
void blockIQ4_XS(const uint8_t *block, float *out) {
  float d = loadHalf(block);
  uint16_t high = loadU16(block + 2);
  const uint8_t *lows = block + 4, *qs = block + 8;
  for (int sub = 0; sub < 8; ++sub) {
    int scale = (((lows[sub / 2] >> (4 * (sub % 2))) & 0x0f) | ((high >> (2 * sub)) & 3) << 4) - 32;
    float dl = d * float(scale);
    const uint8_t *q = qs + 16 * sub;
    for (int j = 0; j < 16; ++j) {
      out[32 * sub + j] = dl * float(kIq4Levels[q[j] & 0x0f]);
      out[32 * sub + j + 16] = dl * float(kIq4Levels[q[j] >> 4]);
    }
  }
}

// Q6_K: 256 weights: 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits),
// 16 int8 scales (one per 16 weights), f16 d. Each half of 128 weights uses
// 64 bytes of ql and 32 of qh: weight l + 32 k (k = 0..3, l = 0..31) takes
// ql[l + 32 (k & 1)]'s low (k < 2) or high nibble and bits 2k..2k+1 of qh[l].
// value = (d * scale) * (q - 32).
void blockQ6_K(const uint8_t *block, float *out) {
  const uint8_t *ql = block, *qh = block + 128;
  const int8_t *scales = reinterpret_cast<const int8_t *>(block + 192);
  float d = loadHalf(block + 208);
  for (int half = 0; half < 2; ++half) {
    const uint8_t *l4 = ql + 64 * half, *h2 = qh + 32 * half;
    float *y = out + 128 * half;
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        int low = k < 2 ? l4[l + 32 * (k & 1)] & 0x0f : l4[l + 32 * (k & 1)] >> 4;
        int high = (h2[l] >> (2 * k)) & 3;
        int index = 32 * k + l;
        float scale = d * float(scales[8 * half + index / 16]);
        y[index] = scale * float((low | (high << 4)) - 32);
      }
  }
}

using BlockFunction = void (*)(const uint8_t *, float *);

BlockFunction blockFunction(uint32_t code) {
  switch (static_cast<GgmlType>(code)) {
  case GgmlType::Q4_0: return blockQ4_0;
  case GgmlType::Q4_1: return blockQ4_1;
  case GgmlType::Q5_0: return blockQ5_0;
  case GgmlType::Q5_1: return blockQ5_1;
  case GgmlType::Q8_0: return blockQ8_0;
  case GgmlType::Q2_K: return blockQ2_K;
  case GgmlType::Q3_K: return blockQ3_K;
  case GgmlType::Q4_K: return blockQ4_K;
  case GgmlType::Q5_K: return blockQ5_K;
  case GgmlType::Q6_K: return blockQ6_K;
  case GgmlType::IQ4_NL: return blockIQ4_NL;
  case GgmlType::IQ4_XS: return blockIQ4_XS;
  default: return nullptr;
  }
}

} // namespace

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x03ff;
  uint32_t result;
  if (exponent == 0x1f) {
    // Infinity, or a NaN made quiet (as F16C and numpy's conversion do).
    result = sign | 0x7f800000 | (mantissa << 13) | (mantissa ? 0x00400000 : 0);
  } else if (exponent != 0) {
    result = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    result = sign;
  } else {
    // A subnormal half is a normal float: shift its leading one into place.
    int shift = std::countl_zero(uint16_t(mantissa)) - 5; // 1..10
    mantissa = (mantissa << shift) & 0x03ff;
    result = sign | (uint32_t(127 - 15 + 1 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(result);
}

float bfloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

bool canDequantize(uint32_t code) {
  return code == uint32_t(GgmlType::F32) || code == uint32_t(GgmlType::F16) ||
         code == uint32_t(GgmlType::BF16) || blockFunction(code) != nullptr;
}

std::string dequantize(uint32_t code, std::span<const uint8_t> raw, std::span<float> out) {
  const GgmlTypeInfo *type = ggmlTypeInfo(code);
  if (!type || !canDequantize(code))
    return "ggml type " + ggmlTypeName(code) + " cannot be dequantized yet (" +
           std::string(kDequantizedTypes) + " can)";
  if (out.size() % type->blockElements != 0 ||
      raw.size() != out.size() / type->blockElements * type->blockBytes)
    return std::to_string(out.size()) + " elements of " + type->name + " take " +
           std::to_string(out.size() / type->blockElements * type->blockBytes) +
           " bytes in whole blocks of " + std::to_string(type->blockElements) + ", not " +
           std::to_string(raw.size());
  switch (static_cast<GgmlType>(code)) {
  case GgmlType::F32:
    // An empty span's data() may be null, which memcpy must not be given.
    if (!raw.empty())
      std::memcpy(out.data(), raw.data(), raw.size());
    return "";
  case GgmlType::F16:
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = halfToFloat(loadU16(raw.data() + 2 * i));
    return "";
  case GgmlType::BF16:
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = bfloat16ToFloat(loadU16(raw.data() + 2 * i));
    return "";
  default:
    break;
  }
  BlockFunction block = blockFunction(code);
  size_t blocks = out.size() / type->blockElements;
  for (size_t b = 0; b < blocks; ++b)
    block(raw.data() + b * type->blockBytes, out.data() + b * type->blockElements);
  return "";
}

std::string dequantizeTensor(const GgufTensor &tensor, std::span<float> out) {
  if (out.size() != tensor.elements)
    return "tensor '" + std::string(tensor.name) + "' has " + std::to_string(tensor.elements) +
           " elements, not " + std::to_string(out.size());
  std::string error = dequantize(tensor.typeCode, tensor.data, out);
  return error.empty() ? "" : "tensor '" + std::string(tensor.name) + "': " + error;
}

} // namespace mk
