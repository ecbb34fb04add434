// Libraries opened at run time (dlopen), as mkc opens NVRTC and nvJitLink
// and libmkrt opens NCCL: nothing links against them, and a machine without
// one hears which files were tried.
#ifndef MKC_CORE_SUPPORT_SHAREDLIBRARY_H
#define MKC_CORE_SUPPORT_SHAREDLIBRARY_H

#include <dlfcn.h>

#include <string>
#include <vector>

namespace mk {

struct OpenedLibrary {
  void *handle = nullptr; // nullptr when no candidate loads
  std::string tried;      // "a, b, c": every candidate, for the message then
};

// The first of `candidates` that dlopen loads (RTLD_NOW | RTLD_LOCAL).
OpenedLibrary openFirstLibrary(const std::vector<std::string> &candidates);

// Binds `function` to the symbol `name` of `library`; false when it has none.
template <class Function> bool bindSymbol(void *library, const char *name, Function &function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

} // namespace mk

#endif
