#include "runtime/gpu/CublasLt.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

namespace mk {

namespace {

#define MKC_STRINGIFY_EXPANDED(name) MKC_STRINGIFY(name)
#define MKC_STRINGIFY(name) #name

struct Loaded {
  CublasLt library;
  std::string problem;
};

// The places tried, in order: the user's choice, the loader's search path,
// then where CUDA toolkits install themselves.
std::vector<std::string> candidates() {
  const std::string name = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> paths;
  if (const char *chosen = std::getenv("MKRT_CUBLASLT"))
    paths.push_back(chosen);
  paths.push_back(name);
  if (const char *home = std::getenv("CUDA_HOME"))
    paths.push_back(std::string(home) + "/lib64/" + name);
  for (const char *folder : {"/usr/local/cuda/lib64/", "/usr/local/cuda/lib/",
                             "/usr/local/cuda-" MKC_STRINGIFY_EXPANDED(CUBLAS_VER_MAJOR) ".0/lib64/",
                             "/usr/local/cuda-" MKC_STRINGIFY_EXPANDED(CUBLAS_VER_MAJOR) ".0/lib/"})
    paths.push_back(folder + name);
  return paths;
}

Loaded load() {
  Loaded loaded;
  void *handle = nullptr;
  std::vector<std::string> paths = candidates();
  for (const std::string &path : paths)
    if ((handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!handle) {
    loaded.problem = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR) +
                     " not found (MKRT_CUBLASLT may name it)";
    return loaded;
  }
#define MKC_CUBLASLT_BIND(name)                                                                    \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                 \
  if (!loaded.library.name && loaded.problem.empty())                                              \
    loaded.problem = "libcublasLt has no " #name;
  MKC_CUBLASLT_FUNCTIONS(MKC_CUBLASLT_BIND)
#undef MKC_CUBLASLT_BIND
  return loaded;
}

} // namespace

const CublasLt *CublasLt::load(std::string &whyNot) {
  static const Loaded loaded = mk::load();
  if (!loaded.problem.empty()) {
    whyNot = loaded.problem;
    return nullptr;
  }
  return &loaded.library;
}

std::string CublasLt::describe(cublasStatus_t status) const {
  const char *name = cublasLtGetStatusName(status);
  return name ? name : "cuBLAS status " + std::to_string(static_cast<int>(status));
}

} // namespace mk
