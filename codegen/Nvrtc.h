// NVRTC, loaded at run time (dlopen of libnvrtc.so.13 or .12): mkc then
// runs where no CUDA toolkit is installed, and only the levels that compile
// a kernel (--emit=cubin, --emit=mk with a kernel) need one. The few entry
// points used are declared here, so building mkc needs no CUDA header
// either.
#ifndef MKC_CODEGEN_NVRTC_H
#define MKC_CODEGEN_NVRTC_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct NvrtcHeader {
  std::string name, text;
};

struct NvrtcResult {
  std::vector<uint8_t> cubin; // when compiled for a real architecture (sm_XX)
  std::vector<uint8_t> ltoIr; // when compiled with -dlto (for nvJitLink, codegen/JitLink.h)
  std::string ptx;            // when NVRTC kept it
  std::string log;            // the compiler's and ptxas's messages
};

class Nvrtc {
public:
  // The library, loaded once per process; an error saying which files were
  // tried when none loads.
  static llvm::Expected<const Nvrtc &> get();

  std::string version() const; // "13.0"
  int majorVersion() const;
  // Compiles one translation unit; an error carrying the log when it fails.
  llvm::Expected<NvrtcResult> compile(const std::string &source, const std::string &name,
                                      const std::vector<NvrtcHeader> &headers,
                                      const std::vector<std::string> &options) const;

  struct Api;

private:
  explicit Nvrtc(const Api &api) : api(api) {}
  const Api &api;
};

} // namespace mk

#endif
