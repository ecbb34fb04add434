#include "runtime/gpu/Nccl.h"

#include "core/support/SharedLibrary.h"

#include <cstdlib>
#include <vector>

namespace mk {

namespace {

struct Loaded {
  Nccl nccl{};
  std::string problem;
};

Loaded load() {
  Loaded loaded;
  std::vector<std::string> candidates;
  if (const char *named = std::getenv("MKRT_NCCL_LIBRARY"); named && *named)
    candidates.push_back(named);
  candidates.insert(candidates.end(), {"libnccl.so.2", "libnccl.so",
                                       "/usr/local/cuda/lib64/libnccl.so.2"});
  OpenedLibrary opened = openFirstLibrary(candidates);
  void *library = opened.handle;
  if (!library) {
    loaded.problem = "NCCL not found (tried " + opened.tried +
                     "): set MKRT_NCCL_LIBRARY to its libnccl.so.2 to run several GPUs";
    return loaded;
  }
  Nccl &n = loaded.nccl;
  const char *missing = nullptr;
  auto need = [&](const char *name, auto &function) {
    if (!bindSymbol(library, name, function) && !missing)
      missing = name;
  };
  need("ncclGetVersion", n.getVersion);
  need("ncclGetErrorString", n.getErrorString);
  need("ncclCommInitAll", n.commInitAll);
  need("ncclCommDestroy", n.commDestroy);
  need("ncclMemAlloc", n.memAlloc);
  need("ncclMemFree", n.memFree);
  need("ncclCommWindowRegister", n.commWindowRegister);
  need("ncclCommWindowDeregister", n.commWindowDeregister);
  need("ncclGroupStart", n.groupStart);
  need("ncclGroupEnd", n.groupEnd);
  if (missing)
    loaded.problem = std::string("the NCCL found has no ") + missing +
                     ": tensor-parallel runs need NCCL 2.28 or later";
  return loaded;
}

} // namespace

const Nccl *Nccl::load(std::string &whyNot) {
  static const Loaded loaded = mk::load();
  if (!loaded.problem.empty()) {
    whyNot = loaded.problem;
    return nullptr;
  }
  return &loaded.nccl;
}

int Nccl::version() const {
  int code = 0;
  getVersion(&code);
  return code;
}

std::string Nccl::describe(NcclResult result, const std::string &what) const {
  if (result == 0)
    return "";
  const char *text = getErrorString(result);
  return what + ": NCCL error " + std::to_string(result) + " (" + (text ? text : "unknown") + ")";
}

} // namespace mk
