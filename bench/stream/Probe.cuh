// What the probes of this folder share: an exit naming the failed CUDA
// call, the kernel's weight load (16 bytes that skip L1, as a gemv streams
// them), the global timer, an L2 flush, and each CTA's start and end marks
// with the span they give. Each probe is one .cu built alone with nvcc,
// which finds this header beside it.
#ifndef MKC_BENCH_STREAM_PROBE_CUH
#define MKC_BENCH_STREAM_PROBE_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

// Reads a buffer (a few times L2's size) through L2, so that the launch
// after it finds none of its own bytes there.
__global__ void flushL2(const uint4 *buffer, size_t units, unsigned *sink) {
  unsigned folded = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < units; i += size_t(gridDim.x) * blockDim.x)
    folded ^= buffer[i].x;
  if (folded == 0x9e3779b9u) // practically never: only keeps the loads
    *sink = folded;
}

// Thread 0 of each CTA's start and end (globaltimer), as marks[2 * cta]
// and marks[2 * cta + 1]; a barrier first, so the end is the whole CTA's.
__device__ __forceinline__ void markCta(unsigned long long *marks, unsigned long long begin) {
  __syncthreads();
  if (threadIdx.x == 0) {
    marks[2 * blockIdx.x] = begin;
    marks[2 * blockIdx.x + 1] = globalTimer();
  }
}

// The span of a launch's marks: the first CTA's start to the last one's end.
inline unsigned long long markedSpan(const std::vector<unsigned long long> &marks) {
  unsigned long long first = marks[0], last = marks[1];
  for (size_t c = 0; c + 1 < marks.size(); c += 2) {
    first = std::min(first, marks[c]);
    last = std::max(last, marks[c + 1]);
  }
  return last - first;
}

#endif
