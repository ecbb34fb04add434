// `mkc --version`: the compiler, its build, and the CUDA libraries this
// machine has, found at run time as the kernel levels would find them. The
// build type and git revision come from core/support/BuildInfo.h.
#include "compiler/tools/Version.h"

#include "codegen/Nvrtc.h"
#include "core/support/BuildInfo.h"
#include "compiler/driver/WriteArtifact.h"
#include "runtime/format/MkFile.h"
#include "runtime/gpu/GpuDevice.h"


namespace mk {

std::string versionText() {
  std::string text = std::string(kCompilerVersion) + " (" + buildDescription() +
                     "), writes .mk format " + std::to_string(kMkFormatVersion) + "\n";
  auto nvrtc = Nvrtc::get();
  text += "NVRTC: " + (nvrtc ? nvrtc->version() : "not found (" + llvm::toString(nvrtc.takeError()) + ")") + "\n";
  text += "CUDA driver: " + cudaDriverVersion() + "\n";
  return text;
}

} // namespace mk
