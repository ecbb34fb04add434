// CRC-32 as zlib computes it (polynomial 0xEDB88320, reflected, initial and
// final XOR 0xFFFFFFFF), so that any tool can check a .mk section with
// zlib.crc32 or `crc32`. Slicing by eight: gigabytes of weights are checked
// every time a model is opened.
#ifndef MKC_RUNTIME_FORMAT_CRC32_H
#define MKC_RUNTIME_FORMAT_CRC32_H

#include <cstdint>
#include <span>

namespace mk {

// `previous` continues a checksum over data given in pieces.
uint32_t crc32(std::span<const uint8_t> data, uint32_t previous = 0);

} // namespace mk

#endif
