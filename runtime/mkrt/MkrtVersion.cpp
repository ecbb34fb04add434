// mkrt_version and mkrt_cuda_driver_version. The build type and git
// revision come from runtime/mkrt/CMakeLists.txt, for this file alone, so
// that a new revision recompiles nothing else.
#include "mkrt.h"

#include "runtime/format/MkFile.h"

#ifdef MKRT_WITH_GPU
#include "runtime/gpu/GpuDevice.h"
#endif

#include <string>

#ifndef MKC_BUILD_TYPE
#define MKC_BUILD_TYPE ""
#endif
#ifndef MKC_GIT_REVISION
#define MKC_GIT_REVISION ""
#endif

extern "C" {

const char *mkrt_version(void) {
  static const std::string version = [] {
    std::string text = "libmkrt for .mk format " + std::to_string(mk::kMkFormatVersion);
    std::string build = MKC_BUILD_TYPE;
    text += ", " + (build.empty() ? std::string("unknown") : build) + " build";
    std::string revision = MKC_GIT_REVISION;
    text += revision.empty() ? ", git revision unknown" : ", git " + revision;
    return text;
  }();
  return version.c_str();
}

const char *mkrt_cuda_driver_version(void) {
#ifdef MKRT_WITH_GPU
  static const std::string version = mk::cudaDriverVersion();
#else
  static const std::string version = "not looked for (this libmkrt has no GPU support)";
#endif
  return version.c_str();
}

} // extern "C"
