// Where a prompt's time goes on the GPU, by kind of kernel: with
// MKRT_PREFILL_PROFILE set in the environment, GpuPrefill brackets each
// launch of a prompt with CUDA events and, when the prompt and its first
// token are done, prints one line to stderr (bench/prefill_bench.py reads
// it):
//   prompt profile: 512 rows, 3.71 ms from the first kernel's start to the
//   last's end; a prompt's GEMM: 2.10 ms, 112 launches, 480.0 TFLOP/s; ...
// The events cost a little time themselves: a profiled prompt is not the
// timed one.
#ifndef MKC_RUNTIME_GPU_PREFILLPROFILE_H
#define MKC_RUNTIME_GPU_PREFILLPROFILE_H

#include "runtime/gpu/CudaDriver.h"

#include <string>
#include <vector>

namespace mk {

class PrefillProfile {
public:
  explicit PrefillProfile(const CudaDriver &cuda);
  ~PrefillProfile();
  PrefillProfile(const PrefillProfile &) = delete;
  PrefillProfile &operator=(const PrefillProfile &) = delete;

  bool enabled() const { return on; }
  // Around one launch of kind `what` (the launch's own description) doing
  // `flops` floating-point operations (0: not counted).
  void begin(const char *what, double flops);
  void end();
  // After the prompt's kernels have finished: the line for `rows` rows, and
  // the launches forgotten. Empty when nothing was recorded or the events
  // failed.
  std::string report(long long rows);

private:
  struct Launch {
    std::string what;
    double flops;
    CUevent start, stop;
  };
  CUevent event();

  const CudaDriver &cuda;
  bool on = false;
  std::vector<Launch> launches;
  std::vector<CUevent> spare; // events of earlier prompts, reused
};

} // namespace mk

#endif
