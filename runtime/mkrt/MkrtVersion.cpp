// mkrt_version and mkrt_cuda_driver_version. The build type and git
// revision come from core/support/BuildInfo.h, which only the version files
// include, so that a new revision recompiles nothing else.
#include "mkrt.h"

#include "core/support/BuildInfo.h"
#include "runtime/format/MkFile.h"

#ifdef MKRT_WITH_GPU
#include "runtime/gpu/GpuDevice.h"
#endif

#include <string>


extern "C" {

const char *mkrt_version(void) {
  static const std::string version = [] {
    return "libmkrt for .mk format " + std::to_string(mk::kMkFormatVersion) + ", " +
           mk::buildDescription();
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
