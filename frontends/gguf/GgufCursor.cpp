#include "frontends/gguf/GgufCursor.h"

#include <bit>

namespace mk {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader copies little-endian fields as they are");

std::string GgufCursor::need(uint64_t count, const std::string &what) const {
  if (count <= remaining())
    return "";
  return "truncated at offset " + std::to_string(position) + " while reading " + what +
         " (needs " + std::to_string(count) + " bytes, " + std::to_string(remaining()) +
         " left)";
}

std::string GgufCursor::readString(std::string_view &text, const std::string &what) {
  uint64_t start = position;
  uint64_t length = 0;
  if (std::string error = read(length, "the length of " + what); !error.empty())
    return error;
  if (length > remaining()) {
    std::string error = "string length " + std::to_string(length) + " at offset " +
                        std::to_string(start) + " (" + what + ") runs past the end of the file (" +
                        std::to_string(remaining()) + " bytes left)";
    position = start;
    return error;
  }
  text = std::string_view(reinterpret_cast<const char *>(bytes.data() + position), length);
  position += length;
  return "";
}

std::string GgufCursor::readBytes(uint64_t count, std::span<const uint8_t> &out,
                                  const std::string &what) {
  if (std::string error = need(count, what); !error.empty())
    return error;
  out = bytes.subspan(position, count);
  position += count;
  return "";
}

} // namespace mk
