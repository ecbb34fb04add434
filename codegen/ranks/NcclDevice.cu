// The NCCL device API a tensor-parallel megakernel calls
// (codegen/device/Ranks.cuh), behind plain extern "C" device functions.
// NVRTC cannot compile NCCL's device headers (docs/tensor-parallel.md), so
// the build compiles this file with nvcc to LTO-IR, mkc embeds it, and
// nvJitLink links it into the kernel (codegen/Megakernel.cpp); the calls
// are then inlined.
#include <nccl_device.h>

// The address at which this GPU reads `offset` bytes into rank `peer`'s
// part of `window` (an ncclWindow_t): NVLink-accessible (LSA) peers only.
extern "C" __device__ void *mk_nccl_lsa_pointer(const void *window, unsigned long long offset,
                                                int peer) {
  return ncclGetLsaPointer(static_cast<ncclWindow_t>(const_cast<void *>(window)), offset, peer);
}
