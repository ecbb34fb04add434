// NCCL's host API, loaded at run time (dlopen of libnccl.so.2, or the file
// MKRT_NCCL_LIBRARY names: a pip-installed NCCL is on no library path), so
// that libmkrt links nothing of NCCL and only a tensor-parallel run needs
// it. The few entry points used are declared here: building needs no NCCL
// header either.
#ifndef MKC_RUNTIME_GPU_NCCL_H
#define MKC_RUNTIME_GPU_NCCL_H

#include <cstddef>
#include <string>

namespace mk {

using NcclResult = int;                      // ncclResult_t; 0 is ncclSuccess
using NcclComm = struct NcclCommImpl *;      // ncclComm_t
using NcclWindow = struct NcclWindowImpl *;  // ncclWindow_t, a device address
constexpr int kNcclWindowSymmetric = 0x01;   // NCCL_WIN_COLL_SYMMETRIC

struct Nccl {
  int (*getVersion)(int *);
  const char *(*getErrorString)(NcclResult);
  NcclResult (*commInitAll)(NcclComm *, int, const int *);
  NcclResult (*commDestroy)(NcclComm);
  NcclResult (*memAlloc)(void **, size_t);
  NcclResult (*memFree)(void *);
  NcclResult (*commWindowRegister)(NcclComm, void *, size_t, NcclWindow *, int);
  NcclResult (*commWindowDeregister)(NcclComm, NcclWindow);
  NcclResult (*groupStart)();
  NcclResult (*groupEnd)();

  // The library, loaded once per process; nullptr with `whyNot` naming the
  // files tried, or the entry point missing (NCCL before 2.28 has no
  // windows).
  static const Nccl *load(std::string &whyNot);

  int version() const; // NCCL_VERSION_CODE: 22809 for 2.28.9
  // "what: ncclInvalidUsage (...)" for a failed call, "" for success.
  std::string describe(NcclResult result, const std::string &what) const;
};

} // namespace mk

#endif
