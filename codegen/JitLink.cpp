#include "codegen/JitLink.h"

#include "core/support/SharedLibrary.h"

#include <memory>

namespace mk {

namespace {

// nvJitLink.h's types, as the C ABI passes them.
using nvJitLinkResult = int;
using nvJitLinkHandle = struct NvJitLinkImpl *;
constexpr nvJitLinkResult kSuccess = 0;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

struct JitLink::Api {
  nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **);
  nvJitLinkResult (*destroy)(nvJitLinkHandle *);
  nvJitLinkResult (*addData)(nvJitLinkHandle, int, const void *, size_t, const char *);
  nvJitLinkResult (*complete)(nvJitLinkHandle);
  nvJitLinkResult (*cubinSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*cubin)(nvJitLinkHandle, void *);
  nvJitLinkResult (*errorLogSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*errorLog)(nvJitLinkHandle, char *);
  nvJitLinkResult (*infoLogSize)(nvJitLinkHandle, size_t *);
  nvJitLinkResult (*infoLog)(nvJitLinkHandle, char *);
};

namespace {

struct Loaded {
  std::unique_ptr<JitLink::Api> api;
  std::string problem;
};

Loaded load() {
  OpenedLibrary opened =
      openFirstLibrary({"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so",
                        "/usr/local/cuda/lib64/libnvJitLink.so.13",
                        "/usr/local/cuda/lib64/libnvJitLink.so.12"});
  void *library = opened.handle;
  if (!library)
    return {nullptr, "nvJitLink not found (tried " + opened.tried +
                         "): install the CUDA toolkit's nvJitLink to link a tensor-parallel kernel"};
  auto api = std::make_unique<JitLink::Api>();
  bool complete = bindSymbol(library, "nvJitLinkCreate", api->create) &&
                  bindSymbol(library, "nvJitLinkDestroy", api->destroy) &&
                  bindSymbol(library, "nvJitLinkAddData", api->addData) &&
                  bindSymbol(library, "nvJitLinkComplete", api->complete) &&
                  bindSymbol(library, "nvJitLinkGetLinkedCubinSize", api->cubinSize) &&
                  bindSymbol(library, "nvJitLinkGetLinkedCubin", api->cubin) &&
                  bindSymbol(library, "nvJitLinkGetErrorLogSize", api->errorLogSize) &&
                  bindSymbol(library, "nvJitLinkGetErrorLog", api->errorLog) &&
                  bindSymbol(library, "nvJitLinkGetInfoLogSize", api->infoLogSize) &&
                  bindSymbol(library, "nvJitLinkGetInfoLog", api->infoLog);
  if (!complete)
    return {nullptr, "the nvJitLink found lacks an entry point mkc needs (CUDA 12 or later)"};
  return {std::move(api), ""};
}

// The handle, destroyed on every path out.
class Linker {
public:
  explicit Linker(const JitLink::Api &api) : api(api) {}
  ~Linker() {
    if (handle)
      api.destroy(&handle);
  }
  std::string log() const {
    std::string text;
    size_t size = 0;
    if (api.infoLogSize(handle, &size) == kSuccess && size > 1) {
      std::string info(size, '\0');
      api.infoLog(handle, info.data());
      text += info.substr(0, size - 1);
    }
    if (api.errorLogSize(handle, &size) == kSuccess && size > 1) {
      std::string errors(size, '\0');
      api.errorLog(handle, errors.data());
      text += errors.substr(0, size - 1);
    }
    return text;
  }
  nvJitLinkHandle handle = nullptr;

private:
  const JitLink::Api &api;
};

} // namespace

llvm::Expected<const JitLink &> JitLink::get() {
  static Loaded loaded = load();
  if (!loaded.api)
    return error(loaded.problem);
  static JitLink instance(*loaded.api);
  return instance;
}

llvm::Expected<LinkResult> JitLink::link(const std::vector<LinkPiece> &pieces,
                                         const std::vector<std::string> &options) const {
  std::vector<const char *> optionTexts;
  for (const std::string &option : options)
    optionTexts.push_back(option.c_str());
  Linker linker(api);
  nvJitLinkResult status = api.create(&linker.handle, static_cast<uint32_t>(optionTexts.size()),
                                      optionTexts.data());
  if (status != kSuccess)
    return error("nvJitLinkCreate failed (" + llvm::Twine(status) + ")");
  for (const LinkPiece &piece : pieces) {
    status = api.addData(linker.handle, static_cast<int>(piece.kind), piece.bytes.data(),
                         piece.bytes.size(), piece.name.c_str());
    if (status != kSuccess)
      return error("nvJitLink could not take " + piece.name + " (" + llvm::Twine(status) +
                   "):\n" + linker.log());
  }
  status = api.complete(linker.handle);
  LinkResult result;
  result.log = linker.log();
  if (status != kSuccess)
    return error("nvJitLink could not link the kernel (" + llvm::Twine(status) + "):\n" +
                 result.log);
  size_t size = 0;
  if (api.cubinSize(linker.handle, &size) != kSuccess || size == 0)
    return error("nvJitLink linked no CUBIN");
  result.cubin.resize(size);
  if (api.cubin(linker.handle, result.cubin.data()) != kSuccess)
    return error("nvJitLink could not hand over the linked CUBIN");
  return std::move(result);
}

} // namespace mk
