// GpuRanks where mkc was built without the CUDA toolkit's cuda.h.
#include "runtime/gpu/GpuRanks.h"

namespace mk {

std::unique_ptr<GpuRanks> GpuRanks::open(const Artifact &, int64_t, RanksPlacement,
                                         GpuStatus &status, std::string &error) {
  status = GpuStatus::Unsupported;
  error = "this build has no GPU support: cuda.h was not found when it was configured";
  return nullptr;
}

} // namespace mk
