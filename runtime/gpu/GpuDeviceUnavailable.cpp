// GpuDevice where mkc was built without the CUDA toolkit's cuda.h.
#include "runtime/gpu/GpuDevice.h"

namespace mk {

std::string cudaDriverVersion() {
  return "not looked for (this build has no GPU support: cuda.h was not found)";
}

std::unique_ptr<GpuDevice> GpuDevice::open(std::string &whyNot) {
  whyNot = "this build has no GPU support: cuda.h was not found when it was configured";
  return nullptr;
}

std::unique_ptr<GpuDevice> GpuDevice::openOrdinal(int, std::string &whyNot) { return open(whyNot); }

int GpuDevice::count() { return 0; }

} // namespace mk
