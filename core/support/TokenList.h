// The token lists of the command lines, "5,17,42": the same syntax for
// `mkc eval --tokens` and `mkrun --tokens/--prompt-tokens`, since the two
// follow one teacher-forced contract. Header-only and plain C++, so that
// mkrun links nothing of the compiler for it.
#ifndef MKC_CORE_SUPPORT_TOKENLIST_H
#define MKC_CORE_SUPPORT_TOKENLIST_H

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// A non-negative decimal integer of at most 18 digits (so it fits int64).
inline bool parseCount(const std::string &text, int64_t &value) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  value = std::stoll(text);
  return true;
}

// Appends the comma-separated counts of `text` to `tokens`; false when any
// item is not a count or the list is empty.
inline bool parseTokenList(const std::string &text, std::vector<int64_t> &tokens) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    int64_t token = 0;
    if (!parseCount(text.substr(start, end - start), token))
      return false;
    tokens.push_back(token);
    start = end + 1;
  }
  return !tokens.empty();
}

// The same syntax back: "5,17,42".
inline std::string formatTokenList(const std::vector<int64_t> &tokens) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i)
    text += (i ? "," : "") + std::to_string(tokens[i]);
  return text;
}

} // namespace mk

#endif
