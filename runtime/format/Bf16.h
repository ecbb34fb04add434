// bf16, the storage type of every weight in a .mk file: the top 16 bits of
// an f32. The compiler rounds to nearest even when it packs weights, and every
// engine that runs a .mk (the CPU executor through libmkrt, the GPU kernel)
// widens the same bits, so all of them compute with identical weights.
#ifndef MKC_RUNTIME_FORMAT_BF16_H
#define MKC_RUNTIME_FORMAT_BF16_H

#include <bit>
#include <cstdint>

namespace mk {

inline uint16_t toBf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  // A NaN must stay a NaN: rounding could carry its payload into the
  // exponent and make it an infinity. Keep it quiet.
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  uint32_t roundingBias = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

inline float fromBf16(uint16_t value) {
  return std::bit_cast<float>(static_cast<uint32_t>(value) << 16);
}

inline float roundToBf16(float value) { return fromBf16(toBf16(value)); }

} // namespace mk

#endif
