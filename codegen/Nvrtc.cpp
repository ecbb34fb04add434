#include "codegen/Nvrtc.h"

#include "core/support/SharedLibrary.h"

#include <memory>
#include <mutex>

namespace mk {

namespace {

// nvrtc.h's types, as the C ABI passes them.
using nvrtcResult = int;
using nvrtcProgram = struct NvrtcProgramImpl *;
constexpr nvrtcResult kNvrtcSuccess = 0;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

struct Nvrtc::Api {
  const char *(*getErrorString)(nvrtcResult);
  nvrtcResult (*version)(int *, int *);
  nvrtcResult (*createProgram)(nvrtcProgram *, const char *, const char *, int,
                               const char *const *, const char *const *);
  nvrtcResult (*destroyProgram)(nvrtcProgram *);
  nvrtcResult (*compileProgram)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getProgramLog)(nvrtcProgram, char *);
  nvrtcResult (*getPTXSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getPTX)(nvrtcProgram, char *);
  nvrtcResult (*getCUBINSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getCUBIN)(nvrtcProgram, char *);
  // CUDA 12 and later; nullptr before.
  nvrtcResult (*getLTOIRSize)(nvrtcProgram, size_t *);
  nvrtcResult (*getLTOIR)(nvrtcProgram, char *);
};

namespace {

// The loaded library, or why none could be.
struct Loaded {
  std::unique_ptr<Nvrtc::Api> api;
  std::string problem;
};

Loaded load() {
  // The toolkit's own folder too: ld.so.conf does not always list it.
  OpenedLibrary opened = openFirstLibrary({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                           "/usr/local/cuda/lib64/libnvrtc.so.13",
                                           "/usr/local/cuda/lib64/libnvrtc.so.12"});
  void *library = opened.handle;
  if (!library)
    return {nullptr, "NVRTC not found (tried " + opened.tried +
                         "): install the CUDA toolkit's NVRTC to compile a kernel"};
  auto api = std::make_unique<Nvrtc::Api>();
  bool complete = bindSymbol(library, "nvrtcGetErrorString", api->getErrorString) &&
                  bindSymbol(library, "nvrtcVersion", api->version) &&
                  bindSymbol(library, "nvrtcCreateProgram", api->createProgram) &&
                  bindSymbol(library, "nvrtcDestroyProgram", api->destroyProgram) &&
                  bindSymbol(library, "nvrtcCompileProgram", api->compileProgram) &&
                  bindSymbol(library, "nvrtcGetProgramLogSize", api->getProgramLogSize) &&
                  bindSymbol(library, "nvrtcGetProgramLog", api->getProgramLog) &&
                  bindSymbol(library, "nvrtcGetPTXSize", api->getPTXSize) &&
                  bindSymbol(library, "nvrtcGetPTX", api->getPTX) &&
                  bindSymbol(library, "nvrtcGetCUBINSize", api->getCUBINSize) &&
                  bindSymbol(library, "nvrtcGetCUBIN", api->getCUBIN);
  if (!complete)
    return {nullptr, "the NVRTC found lacks an entry point mkc needs (CUDA 11.1 or later)"};
  if (!bindSymbol(library, "nvrtcGetLTOIRSize", api->getLTOIRSize) ||
      !bindSymbol(library, "nvrtcGetLTOIR", api->getLTOIR))
    api->getLTOIRSize = nullptr;
  return {std::move(api), ""};
}

// The program, destroyed on every path out.
class Program {
public:
  Program(const Nvrtc::Api &api) : api(api) {}
  ~Program() {
    if (handle)
      api.destroyProgram(&handle);
  }
  nvrtcProgram handle = nullptr;

private:
  const Nvrtc::Api &api;
};

} // namespace

llvm::Expected<const Nvrtc &> Nvrtc::get() {
  static Loaded loaded = load();
  if (!loaded.api)
    return error(loaded.problem);
  static Nvrtc instance(*loaded.api);
  return instance;
}

int Nvrtc::majorVersion() const {
  int major = 0, minor = 0;
  api.version(&major, &minor);
  return major;
}

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  api.version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

llvm::Expected<NvrtcResult> Nvrtc::compile(const std::string &source, const std::string &name,
                                           const std::vector<NvrtcHeader> &headers,
                                           const std::vector<std::string> &options) const {
  std::vector<const char *> headerTexts, headerNames, optionTexts;
  for (const NvrtcHeader &header : headers) {
    headerNames.push_back(header.name.c_str());
    headerTexts.push_back(header.text.c_str());
  }
  for (const std::string &option : options)
    optionTexts.push_back(option.c_str());

  Program program(api);
  nvrtcResult status =
      api.createProgram(&program.handle, source.c_str(), name.c_str(),
                        static_cast<int>(headers.size()), headerTexts.data(), headerNames.data());
  if (status != kNvrtcSuccess)
    return error(llvm::Twine("nvrtcCreateProgram: ") + api.getErrorString(status));

  nvrtcResult compiled =
      api.compileProgram(program.handle, static_cast<int>(optionTexts.size()), optionTexts.data());
  NvrtcResult result;
  size_t size = 0;
  if (api.getProgramLogSize(program.handle, &size) == kNvrtcSuccess && size > 1) {
    result.log.resize(size);
    api.getProgramLog(program.handle, result.log.data());
    result.log.resize(size - 1);
  }
  if (compiled != kNvrtcSuccess)
    return error(llvm::Twine("NVRTC could not compile the kernel (") +
                 api.getErrorString(compiled) + "):\n" + result.log);

  // A program for a virtual architecture has no CUBIN, and one for a real
  // architecture may not keep its PTX: each is optional here.
  if (api.getCUBINSize(program.handle, &size) == kNvrtcSuccess && size > 0) {
    result.cubin.resize(size);
    api.getCUBIN(program.handle, reinterpret_cast<char *>(result.cubin.data()));
  }
  if (api.getLTOIRSize && api.getLTOIRSize(program.handle, &size) == kNvrtcSuccess && size > 0) {
    result.ltoIr.resize(size);
    api.getLTOIR(program.handle, reinterpret_cast<char *>(result.ltoIr.data()));
  }
  if (api.getPTXSize(program.handle, &size) == kNvrtcSuccess && size > 1) {
    result.ptx.resize(size);
    api.getPTX(program.handle, result.ptx.data());
    result.ptx.resize(size - 1);
  }
  return std::move(result);
}

} // namespace mk
