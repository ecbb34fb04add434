// What ptxas says about a kernel when asked with --ptxas-options=-v:
//
//   ptxas info    : Compiling entry function 'mk_megakernel' for 'sm_90a'
//   ptxas info    : Function properties for mk_megakernel
//       32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 128 registers, used 1 barriers, 496 bytes smem, ...
#ifndef MKC_CODEGEN_PTXASREPORT_H
#define MKC_CODEGEN_PTXASREPORT_H

#include <optional>
#include <string>

namespace mk {

struct PtxasReport {
  int registers = 0;
  int staticSharedBytes = 0;
  int stackFrameBytes = 0;
  int spillStoreBytes = 0, spillLoadBytes = 0;
};

// The report of entry function `kernel`, or nothing when the log has none.
std::optional<PtxasReport> parsePtxasReport(const std::string &log, const std::string &kernel);

} // namespace mk

#endif
