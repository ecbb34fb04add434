#include "core/support/SharedLibrary.h"

namespace mk {

OpenedLibrary openFirstLibrary(const std::vector<std::string> &candidates) {
  OpenedLibrary opened;
  for (const std::string &candidate : candidates) {
    opened.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (opened.handle)
      return opened;
    opened.tried += (opened.tried.empty() ? "" : ", ") + candidate;
  }
  return opened;
}

} // namespace mk
