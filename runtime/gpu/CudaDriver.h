// The CUDA driver API, found at run time: dlopen("libcuda.so.1") and one
// dlsym per entry point, so that nothing links against libcuda and a machine
// without an NVIDIA driver gets a message instead of a loader error. cuda.h
// supplies the types and enums only; its macros map each name to the
// versioned symbol (cuMemAlloc to cuMemAlloc_v2) that is looked up.
#ifndef MKC_RUNTIME_GPU_CUDADRIVER_H
#define MKC_RUNTIME_GPU_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace mk {

#define MKC_CUDA_DRIVER_FUNCTIONS(X)                                                               \
  X(cuInit)                                                                                        \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuCtxGetDevice)                                                                                \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuDevicePrimaryCtxRelease)                                                                     \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuModuleGetGlobal)                                                                             \
  X(cuFuncGetAttribute)                                                                            \
  X(cuFuncSetAttribute)                                                                            \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                   \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemGetInfo)                                                                                  \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemsetD8)                                                                                    \
  X(cuMemHostAlloc)                                                                                \
  X(cuMemHostGetDevicePointer)                                                                     \
  X(cuMemFreeHost)                                                                                 \
  X(cuEventQuery)                                                                                  \
  X(cuLaunchCooperativeKernel)                                                                     \
  X(cuLaunchKernel)                                                                                \
  X(cuEventCreate)                                                                                 \
  X(cuEventRecord)                                                                                 \
  X(cuEventSynchronize)                                                                            \
  X(cuEventElapsedTime)                                                                            \
  X(cuEventDestroy)                                                                                \
  X(cuStreamCreate)                                                                                \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamDestroy)

struct CudaDriver {
#define MKC_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  MKC_CUDA_DRIVER_FUNCTIONS(MKC_CUDA_DECLARE)
#undef MKC_CUDA_DECLARE

  // The driver, loaded once per process; nullptr with `whyNot` set when
  // libcuda.so.1 is missing or lacks an entry point.
  static const CudaDriver *load(std::string &whyNot);

  // "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
  std::string describe(CUresult result) const;
};

} // namespace mk

#endif
