// nvJitLink, loaded at run time like NVRTC (codegen/Nvrtc.h): links a kernel
// NVRTC compiled to LTO-IR with device code compiled ahead of time (NCCL's
// device API for a tensor-parallel kernel, codegen/ranks/) into one CUBIN.
// Only a tensor-parallel kernel needs it.
#ifndef MKC_CODEGEN_JITLINK_H
#define MKC_CODEGEN_JITLINK_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mk {

// nvJitLink's input kinds, as its C API numbers them.
enum class LinkInput : int { Cubin = 1, Ptx = 2, LtoIr = 3, Fatbin = 4, Object = 5 };

struct LinkPiece {
  LinkInput kind;
  std::span<const uint8_t> bytes;
  std::string name; // for the log
};

struct LinkResult {
  std::vector<uint8_t> cubin;
  std::string log; // the linker's and ptxas's messages
};

class JitLink {
public:
  // The library, loaded once per process; an error naming the files tried.
  static llvm::Expected<const JitLink &> get();

  // Links `pieces` with `options` (e.g. -arch=sm_90a, -lto); an error
  // carrying the linker's log when it fails.
  llvm::Expected<LinkResult> link(const std::vector<LinkPiece> &pieces,
                                  const std::vector<std::string> &options) const;

  struct Api;

private:
  explicit JitLink(const Api &api) : api(api) {}
  const Api &api;
};

} // namespace mk

#endif
