// `mkc --version`: the compiler, its build, and the CUDA libraries this
// machine has, found at run time as the kernel levels would find them. The
// build type and git revision come from compiler/tools/CMakeLists.txt, for
// this file alone.
#include "compiler/tools/Version.h"

#include "codegen/Nvrtc.h"
#include "compiler/driver/WriteArtifact.h"
#include "runtime/format/MkFile.h"
#include "runtime/gpu/GpuDevice.h"

#ifndef MKC_BUILD_TYPE
#define MKC_BUILD_TYPE ""
#endif
#ifndef MKC_GIT_REVISION
#define MKC_GIT_REVISION ""
#endif

namespace mk {

std::string versionText() {
  std::string build = MKC_BUILD_TYPE, revision = MKC_GIT_REVISION;
  std::string text = std::string(kCompilerVersion) + " (" +
                     (build.empty() ? std::string("unknown") : build) + " build, " +
                     (revision.empty() ? std::string("git revision unknown") : "git " + revision) +
                     "), writes .mk format " + std::to_string(kMkFormatVersion) + "\n";
  auto nvrtc = Nvrtc::get();
  text += "NVRTC: " + (nvrtc ? nvrtc->version() : "not found (" + llvm::toString(nvrtc.takeError()) + ")") + "\n";
  text += "CUDA driver: " + cudaDriverVersion() + "\n";
  return text;
}

} // namespace mk
