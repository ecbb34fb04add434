// What the probes of this folder share: an exit naming the failed CUDA
// call, the kernel's weight load (16 bytes that skip L1, as a gemv streams
// them) and the global timer. Each probe is one .cu built alone with nvcc,
// which finds this header beside it.
#ifndef MKC_BENCH_STREAM_PROBE_CUH
#define MKC_BENCH_STREAM_PROBE_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// PROBE_NAME: the probe's name in its error messages, defined before this
// header is included.
#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t status = (call);                                                               \
    if (status != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s: %s: %s\n", PROBE_NAME, #call, cudaGetErrorString(status));     \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

__device__ __forceinline__ uint4 loadStreaming(const uint4 *address) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(address));
  return v;
}

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#endif
