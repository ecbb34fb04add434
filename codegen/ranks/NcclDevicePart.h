// NCCL's device API as codegen/ranks/NcclDevice.cu gives it, compiled by
// nvcc to LTO-IR when mkc was built (an nvcc object of relocatable device
// code), which nvJitLink links into a tensor-parallel kernel.
#ifndef MKC_CODEGEN_RANKS_NCCLDEVICEPART_H
#define MKC_CODEGEN_RANKS_NCCLDEVICEPART_H

#include <cstdint>
#include <span>
#include <string>

namespace mk {

// The object's bytes; empty when the build had no nvcc or NCCL headers.
std::span<const uint8_t> ncclDevicePart();
// "" when the part is there, else why the build left it out.
std::string ncclDevicePartMissing();
// NCCL_VERSION_CODE of the headers it was compiled with (22809: 2.28.9),
// 0 without it: the NCCL a run loads must lay out its windows the same way.
int ncclDevicePartVersion();

} // namespace mk

#endif
