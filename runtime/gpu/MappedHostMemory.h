// Pinned host memory that the device maps (cuMemHostAlloc with DEVICEMAP):
// what a running kernel writes there the host reads while it runs, and the
// other way round. The streaming protocol's buffer (ControlBlock.h's
// MkStream). Freed with its owner.
#ifndef MKC_RUNTIME_GPU_MAPPEDHOSTMEMORY_H
#define MKC_RUNTIME_GPU_MAPPEDHOSTMEMORY_H

#include "runtime/gpu/CudaDriver.h"

#include <cstring>
#include <string>
#include <utility>

namespace mk {

class MappedHostMemory {
public:
  MappedHostMemory() = default;
  MappedHostMemory(const MappedHostMemory &) = delete;
  MappedHostMemory &operator=(const MappedHostMemory &) = delete;
  ~MappedHostMemory() {
    if (host)
      driver->cuMemFreeHost(host);
  }

  // At least `bytes`, zeroed; reused when the last allocation is big enough.
  // "" or why not.
  std::string allocate(const CudaDriver &cuda, size_t bytes, const char *what) {
    if (host && bytes <= size) {
      std::memset(host, 0, size);
      return "";
    }
    if (host)
      cuda.cuMemFreeHost(host);
    host = nullptr;
    driver = &cuda;
    size = bytes ? bytes : 1;
    CUresult result = cuda.cuMemHostAlloc(&host, size, CU_MEMHOSTALLOC_DEVICEMAP);
    if (result == CUDA_SUCCESS)
      result = cuda.cuMemHostGetDevicePointer(&device, host, 0);
    if (result != CUDA_SUCCESS) {
      if (host)
        cuda.cuMemFreeHost(host);
      host = nullptr;
      return "cannot allocate " + std::to_string(bytes) + " bytes of mapped host memory for " +
             what + ": " + cuda.describe(result);
    }
    std::memset(host, 0, size);
    return "";
  }

  void *hostAddress() const { return host; }
  CUdeviceptr deviceAddress() const { return device; }

private:
  const CudaDriver *driver = nullptr;
  void *host = nullptr;
  CUdeviceptr device = 0;
  size_t size = 0;
};

} // namespace mk

#endif
