// Reads a GGUF file's little-endian fields in order, never past the end: each
// read names what it is reading, so that a short file is refused with
// "truncated at offset N while reading WHAT (needs K bytes, M left)".
#ifndef MKC_FRONTENDS_GGUF_GGUFCURSOR_H
#define MKC_FRONTENDS_GGUF_GGUFCURSOR_H

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace mk {

class GgufCursor {
public:
  explicit GgufCursor(std::span<const uint8_t> bytes) : bytes(bytes) {}

  uint64_t offset() const { return position; }
  uint64_t remaining() const { return bytes.size() - position; }

  // Each returns "" or why the field could not be read; `what` names it.
  template <typename T> std::string read(T &value, const std::string &what) {
    if (std::string error = need(sizeof(T), what); !error.empty())
      return error;
    std::memcpy(&value, bytes.data() + position, sizeof(T)); // the file is little-endian, as is the host
    position += sizeof(T);
    return "";
  }

  // A GGUF string: a u64 length, then that many bytes (not terminated).
  std::string readString(std::string_view &text, const std::string &what);

  // `count` bytes, seen in place.
  std::string readBytes(uint64_t count, std::span<const uint8_t> &out, const std::string &what);

private:
  std::string need(uint64_t count, const std::string &what) const;

  std::span<const uint8_t> bytes;
  uint64_t position = 0;
};

} // namespace mk

#endif
