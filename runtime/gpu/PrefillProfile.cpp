#include "runtime/gpu/PrefillProfile.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace mk {

PrefillProfile::PrefillProfile(const CudaDriver &cuda)
    : cuda(cuda), on(std::getenv("MKRT_PREFILL_PROFILE") != nullptr) {}

PrefillProfile::~PrefillProfile() {
  for (const Launch &launch : launches)
    spare.insert(spare.end(), {launch.start, launch.stop});
  for (CUevent e : spare)
    if (e)
      cuda.cuEventDestroy(e);
}

CUevent PrefillProfile::event() {
  CUevent e = nullptr;
  if (!spare.empty()) {
    e = spare.back();
    spare.pop_back();
  } else if (cuda.cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    e = nullptr;
  }
  return e;
}

void PrefillProfile::begin(const char *what, double flops) {
  if (!on)
    return;
  Launch launch{what, flops, event(), event()};
  if (launch.start)
    cuda.cuEventRecord(launch.start, nullptr);
  launches.push_back(launch);
}

void PrefillProfile::end() {
  if (on && !launches.empty() && launches.back().stop)
    cuda.cuEventRecord(launches.back().stop, nullptr);
}

std::string PrefillProfile::report(long long rows) {
  struct Kind {
    double ms = 0, flops = 0;
    int launches = 0;
  };
  std::map<std::string, Kind> kinds;
  bool ok = !launches.empty();
  double span = 0;
  for (const Launch &launch : launches) {
    float ms = 0;
    ok = ok && launch.start && launch.stop && cuda.cuEventSynchronize(launch.stop) == CUDA_SUCCESS &&
         cuda.cuEventElapsedTime(&ms, launch.start, launch.stop) == CUDA_SUCCESS;
    Kind &kind = kinds[launch.what];
    kind.ms += ms;
    kind.flops += launch.flops;
    ++kind.launches;
  }
  if (ok) {
    float ms = 0;
    ok = cuda.cuEventElapsedTime(&ms, launches.front().start, launches.back().stop) == CUDA_SUCCESS;
    span = ms;
  }
  for (const Launch &launch : launches)
    for (CUevent e : {launch.start, launch.stop})
      if (e)
        spare.push_back(e);
  launches.clear();
  if (!ok)
    return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "prompt profile: %lld rows, %.3f ms from the first kernel's start to the last's end",
                rows, span);
  std::string line = text;
  for (const auto &[what, kind] : kinds) {
    std::snprintf(text, sizeof text, "; %s: %.3f ms, %d launches", what.c_str(), kind.ms,
                  kind.launches);
    line += text;
    if (kind.flops > 0 && kind.ms > 0) {
      std::snprintf(text, sizeof text, ", %.1f TFLOP/s", kind.flops / (kind.ms * 1e9));
      line += text;
    }
  }
  return line;
}

} // namespace mk
