#include "runtime/gpu/CudaDriver.h"

#include <dlfcn.h>

namespace mk {

namespace {

// After macro expansion: "cuMemAlloc" becomes "cuMemAlloc_v2", the symbol
// the header's declarations name.
#define MKC_STRINGIFY_EXPANDED(name) MKC_STRINGIFY(name)
#define MKC_STRINGIFY(name) #name

struct Loaded {
  CudaDriver driver;
  std::string problem;
};

Loaded load() {
  Loaded loaded;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    loaded.problem = "libcuda.so.1 not found: no NVIDIA driver on this machine";
    return loaded;
  }
#define MKC_CUDA_BIND(name)                                                                        \
  loaded.driver.name =                                                                             \
      reinterpret_cast<decltype(&::name)>(dlsym(library, MKC_STRINGIFY_EXPANDED(name)));           \
  if (!loaded.driver.name && loaded.problem.empty())                                               \
    loaded.problem = "libcuda.so.1 has no " MKC_STRINGIFY_EXPANDED(                                \
        name) ": the NVIDIA driver is older than the CUDA " MKC_STRINGIFY_EXPANDED(CUDA_VERSION)   \
        " headers mkc was built with";
  MKC_CUDA_DRIVER_FUNCTIONS(MKC_CUDA_BIND)
#undef MKC_CUDA_BIND
  return loaded;
}

} // namespace

const CudaDriver *CudaDriver::load(std::string &whyNot) {
  static const Loaded loaded = mk::load();
  if (!loaded.problem.empty()) {
    whyNot = loaded.problem;
    return nullptr;
  }
  return &loaded.driver;
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(result)) + " (" +
         (text ? text : "no description") + ")";
}

} // namespace mk
