#include "codegen/Megakernel.h"

#include "codegen/JitLink.h"
#include "codegen/KernelSource.h"
#include "codegen/Nvrtc.h"
#include "codegen/PtxasReport.h"
#include "codegen/ranks/NcclDevicePart.h"

#include <chrono>
#include <regex>

namespace mk {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

struct Architecture {
  const char *name;
  uint32_t sharedBytesPerCta; // the most one CTA can opt in to
  bool bulkCopies;            // cp.async.bulk into shared memory, mbarrier byte counts
};

// Every one compiles (tests/codegen); the H200's sm_90a is the one run.
constexpr Architecture kArchitectures[] = {
    {"sm_80", 163 * 1024, false},  {"sm_86", 99 * 1024, false},  {"sm_89", 99 * 1024, false},
    {"sm_90", 227 * 1024, true},   {"sm_90a", 227 * 1024, true}, {"sm_100", 227 * 1024, true},
    {"sm_100a", 227 * 1024, true}, {"sm_120", 99 * 1024, true},
};

llvm::Expected<const Architecture &> findArchitecture(const std::string &arch) {
  for (const Architecture &candidate : kArchitectures)
    if (arch == candidate.name)
      return candidate;
  return error("unsupported architecture '" + arch + "' (supported: " +
               supportedArchitectures() + ")");
}

} // namespace

std::string checkArchitecture(const std::string &arch) {
  auto found = findArchitecture(arch);
  return found ? "" : llvm::toString(found.takeError());
}

namespace {

std::vector<NvrtcHeader> deviceHeaders() {
  std::vector<NvrtcHeader> headers;
  for (const DeviceLibraryFile &file : deviceLibrary())
    headers.push_back({file.name, file.text});
  return headers;
}

} // namespace

std::string supportedArchitectures() {
  std::string list;
  for (const Architecture &arch : kArchitectures)
    list += (list.empty() ? "" : ", ") + std::string(arch.name);
  return list;
}

namespace {

// The source for `arch`, within its shared memory per CTA.
llvm::Expected<KernelSource> sourceFor(const TaskGraph &graph, const Schedule &schedule,
                                       const std::string &arch, const KernelOptions &options) {
  auto target = findArchitecture(arch);
  if (!target)
    return target.takeError();
  KernelOptions forTarget = options;
  forTarget.weightRing = options.weightRing && target->bulkCopies;
  return generateKernelSource(graph, schedule, target->sharedBytesPerCta, forTarget);
}

} // namespace

llvm::Expected<std::string> megakernelSource(const TaskGraph &graph, const Schedule &schedule,
                                             const std::string &arch,
                                             const KernelOptions &options) {
  auto source = sourceFor(graph, schedule, arch, options);
  if (!source)
    return source.takeError();
  return std::move(source->text);
}

namespace {

// A tensor-parallel kernel calls NCCL's device API (codegen/device/Ranks.cuh):
// NVRTC compiles it to LTO-IR, and nvJitLink links it with the part the
// build compiled ahead of time (codegen/ranks/), inlining the calls, and
// runs ptxas. The kernel keeps no PTX of its own.
llvm::Error linkWithNccl(const Nvrtc &nvrtc, const std::string &source,
                         const std::vector<NvrtcHeader> &headers, std::vector<std::string> flags,
                         const std::string &arch, CompiledKernel &kernel) {
  std::span<const uint8_t> part = ncclDevicePart();
  if (part.empty())
    return error("a tensor-parallel kernel links NCCL's device API, and " +
                 ncclDevicePartMissing());
  auto jitLink = JitLink::get();
  if (!jitLink)
    return jitLink.takeError();
  std::erase(flags, "--ptxas-options=-v"); // ptxas runs in the link
  flags.push_back("-rdc=true");
  flags.push_back("-dlto");
  auto compiled = nvrtc.compile(source, "megakernel.cu", headers, flags);
  if (!compiled)
    return compiled.takeError();
  if (compiled->ltoIr.empty())
    return error("NVRTC " + nvrtc.version() + " produced no LTO-IR for " + arch +
                 " (CUDA 12 or later links a tensor-parallel kernel)");
  auto linked = jitLink->link({{LinkInput::LtoIr, compiled->ltoIr, "megakernel.cu"},
                               {LinkInput::Object, part, "NcclDevice.o"}},
                              {"-arch=" + arch, "-lto", "-Xptxas=-v"});
  if (!linked)
    return linked.takeError();
  kernel.cubin = std::move(linked->cubin);
  kernel.log = compiled->log + linked->log;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CompiledKernel> compileMegakernel(const TaskGraph &graph, const Schedule &schedule,
                                                 const std::string &arch,
                                                 const KernelOptions &options) {
  auto source = sourceFor(graph, schedule, arch, options);
  if (!source)
    return source.takeError();
  auto nvrtc = Nvrtc::get();
  if (!nvrtc)
    return nvrtc.takeError();

  auto started = std::chrono::steady_clock::now();
  std::vector<NvrtcHeader> headers = deviceHeaders();
  std::vector<std::string> flags = {"-arch=" + arch, "-std=c++17", "--ptxas-options=-v",
                                    "-lineinfo"};
  // NVRTC 13 reuses the driver's cache of earlier compilations where a
  // driver is installed, and ptxas, not run, then reports nothing.
  if (nvrtc->majorVersion() >= 13)
    flags.push_back("--no-cache");
  CompiledKernel kernel;
  if (graph.ranks > 1) {
    if (auto failed = linkWithNccl(*nvrtc, source->text, headers, flags, arch, kernel))
      return std::move(failed);
  } else {
    auto machine = nvrtc->compile(source->text, "megakernel.cu", headers, flags);
    if (!machine)
      return machine.takeError();
    kernel.cubin = std::move(machine->cubin);
    kernel.ptx = std::move(machine->ptx);
    kernel.log = std::move(machine->log);
    if (kernel.cubin.empty())
      return error("NVRTC " + nvrtc->version() + " produced no CUBIN for " + arch);
    // Older NVRTCs keep no PTX of a program compiled for a real
    // architecture: the PTX is then a second compilation, for the matching
    // virtual one.
    if (kernel.ptx.empty()) {
      std::string virtualArch = "compute_" + arch.substr(3);
      flags[0] = "-arch=" + virtualArch;
      auto portable = nvrtc->compile(source->text, "megakernel.cu", headers, flags);
      if (!portable)
        return portable.takeError();
      kernel.ptx = std::move(portable->ptx);
    }
  }
  kernel.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  auto report = parsePtxasReport(kernel.log, "mk_megakernel");
  if (!report)
    return error("ptxas reported nothing for mk_megakernel; its log:\n" + kernel.log);
  kernel.arch = arch;
  kernel.threads = static_cast<int>(source->threads);
  kernel.dynamicSharedBytes = static_cast<int>(source->sharedBytes);
  kernel.registers = report->registers;
  kernel.sharedBytes = report->staticSharedBytes + kernel.dynamicSharedBytes;
  kernel.spillBytes = report->spillStoreBytes + report->spillLoadBytes;
  kernel.stackFrameBytes = report->stackFrameBytes;
  static const std::regex promptEntry("Compiling entry function '(mk_prefill_[A-Za-z0-9_]+)'");
  for (auto it = std::sregex_iterator(kernel.log.begin(), kernel.log.end(), promptEntry);
       it != std::sregex_iterator(); ++it)
    if (auto prompt = parsePtxasReport(kernel.log, (*it)[1])) {
      ++kernel.promptKernels;
      kernel.promptSpillBytes += prompt->spillStoreBytes + prompt->spillLoadBytes;
    }
  return std::move(kernel);
}

} // namespace mk
