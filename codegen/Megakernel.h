// The persistent megakernel of a compiled model: its CUDA C++ source
// (KernelSource.h), compiled by NVRTC to a CUBIN for one architecture, with
// the PTX kept and ptxas's account of registers, shared memory and spills.
#ifndef MKC_CODEGEN_MEGAKERNEL_H
#define MKC_CODEGEN_MEGAKERNEL_H

#include "codegen/KernelSource.h"
#include "core/taskgraph/TaskGraph.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct CompiledKernel {
  std::vector<uint8_t> cubin;
  std::string ptx;
  std::string log; // NVRTC's and ptxas's messages
  double compileSeconds = 0;
  int registers = 0;   // per thread
  int sharedBytes = 0; // per CTA: ptxas's static shared memory plus the dynamic
  int spillBytes = 0;  // spill stores plus spill loads, per thread
  std::string arch;
  int threads = 0;            // per CTA
  int dynamicSharedBytes = 0; // the launch's dynamic shared memory
  int stackFrameBytes = 0;    // local memory that is not spills (math library slow paths)
  // The prompt kernels a decode kernel's CUBIN also holds
  // (runtime/format/PrefillArgs.h), and their spills added up.
  int promptKernels = 0;
  int promptSpillBytes = 0;
};

constexpr const char *kDefaultArch = "sm_90a";

// The architectures compileMegakernel accepts, e.g. "sm_80, sm_86, ...".
std::string supportedArchitectures();

// "" when compileMegakernel accepts `arch`, else why not (naming the ones it
// does): for a command to refuse a target before any work, kernel or not.
std::string checkArchitecture(const std::string &arch);

// The CUDA C++ source alone, as `mkc compile --emit=cuda` prints it.
llvm::Expected<std::string> megakernelSource(const TaskGraph &graph, const Schedule &schedule,
                                             const std::string &arch = kDefaultArch,
                                             const KernelOptions &options = {});

llvm::Expected<CompiledKernel> compileMegakernel(const TaskGraph &graph, const Schedule &schedule,
                                                 const std::string &arch = kDefaultArch,
                                                 const KernelOptions &options = {});


} // namespace mk

#endif
