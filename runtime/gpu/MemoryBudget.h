// What a model takes of the device's memory, checked against what the
// device has free before anything is allocated, so that a model too big for
// the GPU (or compiled for a context whose KV arena does not fit) is refused
// with the numbers instead of failing halfway through the uploads.
#ifndef MKC_RUNTIME_GPU_MEMORYBUDGET_H
#define MKC_RUNTIME_GPU_MEMORYBUDGET_H

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct MemoryNeed {
  std::string what; // "the weights"
  uint64_t bytes = 0;
};

// "" when the needs fit in `freeBytes` with `reserveBytes` to spare (the
// launch's own buffers, the driver's), or why not: the total, each need,
// and the device's free and total memory.
std::string checkMemoryFits(const std::vector<MemoryNeed> &needs, uint64_t freeBytes,
                            uint64_t totalBytes, uint64_t reserveBytes);

} // namespace mk

#endif
