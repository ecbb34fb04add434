// Where the fields of the .mk header and of a section-table entry sit, for
// the reader and the writer of MkFile.h (docs/mk-format.md, "Header").
// Everything is little-endian, read and written byte by byte so that no
// field is ever accessed unaligned.
#ifndef MKC_RUNTIME_FORMAT_MKFILELAYOUT_H
#define MKC_RUNTIME_FORMAT_MKFILELAYOUT_H

#include <cstdint>

namespace mk::layout {

// The header.
constexpr uint64_t kMagic = 0;         // 8 bytes
constexpr uint64_t kVersion = 8;       // u32
constexpr uint64_t kHeaderBytes = 12;  // u32, 64
constexpr uint64_t kFileBytes = 16;    // u64, the whole file
constexpr uint64_t kTableOffset = 24;  // u64
constexpr uint64_t kSectionCount = 32; // u32
constexpr uint64_t kEntryBytes = 36;   // u32, 32
constexpr uint64_t kTableCrc = 40;     // u32, CRC-32 of the table
constexpr uint64_t kHeaderReserved = 44; // 16 bytes, 0
constexpr uint64_t kHeaderCrc = 60;    // u32, CRC-32 of header bytes [0, 60)

// A section-table entry.
constexpr uint64_t kEntryKind = 0;   // u32
constexpr uint64_t kEntryFlags = 4;  // u32, 0
constexpr uint64_t kEntryOffset = 8; // u64
constexpr uint64_t kEntrySize = 16;  // u64
constexpr uint64_t kEntryCrc = 24;   // u32
constexpr uint64_t kEntryReserved = 28; // u32, 0

inline uint32_t get32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t get64(const uint8_t *p) { return get32(p) | uint64_t(get32(p + 4)) << 32; }
inline void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put64(uint8_t *p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v));
  put32(p + 4, static_cast<uint32_t>(v >> 32));
}

} // namespace mk::layout

#endif
