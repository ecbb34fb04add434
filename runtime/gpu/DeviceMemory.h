// One allocation of device memory, freed with its owner.
#ifndef MKC_RUNTIME_GPU_DEVICEMEMORY_H
#define MKC_RUNTIME_GPU_DEVICEMEMORY_H

#include "runtime/gpu/CudaDriver.h"

#include <cstddef>
#include <string>
#include <utility>

namespace mk {

class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  DeviceMemory(DeviceMemory &&other) noexcept { *this = std::move(other); }
  DeviceMemory &operator=(DeviceMemory &&other) noexcept {
    std::swap(driver, other.driver);
    std::swap(address, other.address);
    std::swap(size, other.size);
    return *this;
  }
  ~DeviceMemory() {
    if (address)
      driver->cuMemFree(address);
  }

  // Replaces the allocation with one of `bytes` (at least 1); "" or why not.
  std::string allocate(const CudaDriver &cuda, size_t bytes, const char *what) {
    DeviceMemory fresh;
    fresh.driver = &cuda;
    fresh.size = bytes;
    CUresult result = cuda.cuMemAlloc(&fresh.address, bytes ? bytes : 1);
    if (result != CUDA_SUCCESS)
      return "cannot allocate " + std::to_string(bytes) + " bytes for " + what + ": " +
             cuda.describe(result);
    *this = std::move(fresh);
    return "";
  }

  CUdeviceptr get() const { return address; }
  size_t bytes() const { return size; }

private:
  const CudaDriver *driver = nullptr;
  CUdeviceptr address = 0;
  size_t size = 0;
};

} // namespace mk

#endif
