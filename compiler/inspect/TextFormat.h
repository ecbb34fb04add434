// The small pieces of text every inspect view writes the same way.
#ifndef MKC_COMPILER_INSPECT_TEXTFORMAT_H
#define MKC_COMPILER_INSPECT_TEXTFORMAT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace mk {

// A JSON string: quotes, backslashes and control characters (a chat
// template's newlines) escaped.
std::string jsonString(std::string_view text);

// "12.3 MiB" beside an exact byte count, for a reader's eye.
std::string humanBytes(uint64_t bytes);

} // namespace mk

#endif
