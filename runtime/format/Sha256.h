// SHA-256, for the kernel's fingerprint in the manifest: it names the exact
// CUBIN a .mk carries, and anyone can recompute it with `sha256sum`.
#ifndef MKC_RUNTIME_FORMAT_SHA256_H
#define MKC_RUNTIME_FORMAT_SHA256_H

#include <cstdint>
#include <span>
#include <string>

namespace mk {

// Lower-case hex, 64 digits.
std::string sha256Hex(std::span<const uint8_t> data);

} // namespace mk

#endif
