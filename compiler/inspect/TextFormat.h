// The small pieces of text every inspect view writes the same way.
#ifndef MKC_COMPILER_INSPECT_TEXTFORMAT_H
#define MKC_COMPILER_INSPECT_TEXTFORMAT_H

#include "core/support/HumanBytes.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace mk {

// A JSON string: quotes, backslashes and control characters (a chat
// template's newlines) escaped.
std::string jsonString(std::string_view text);

} // namespace mk

#endif
