// What `mkc --version` prints (Version.cpp).
#ifndef MKC_COMPILER_TOOLS_VERSION_H
#define MKC_COMPILER_TOOLS_VERSION_H

#include <string>

namespace mk {

// Three lines: the compiler, its build type and git revision; the NVRTC and
// the CUDA driver found at run time, or "not found" and why.
std::string versionText();

} // namespace mk

#endif
