// cuBLASLt, found at run time as the driver is (CudaDriver.h): dlopen of
// libcublasLt and one dlsym per entry point, so that nothing links against
// it and a machine without it still decodes, its prompts one token a step.
// cublasLt.h supplies the types and enums only.
#ifndef MKC_RUNTIME_GPU_CUBLASLT_H
#define MKC_RUNTIME_GPU_CUBLASLT_H

#include <cublasLt.h>

#include <string>

namespace mk {

#define MKC_CUBLASLT_FUNCTIONS(X)                                                                  \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtGetStatusName)                                                                         \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmul)

struct CublasLt {
#define MKC_CUBLASLT_DECLARE(name) decltype(&::name) name = nullptr;
  MKC_CUBLASLT_FUNCTIONS(MKC_CUBLASLT_DECLARE)
#undef MKC_CUBLASLT_DECLARE

  // The library, loaded once per process; nullptr with `whyNot` set when no
  // libcublasLt of the headers' major version is found (MKRT_CUBLASLT names
  // one; else the loader's path, then the CUDA toolkit's usual folders) or
  // it lacks an entry point.
  static const CublasLt *load(std::string &whyNot);

  // "CUBLAS_STATUS_NOT_SUPPORTED"
  std::string describe(cublasStatus_t status) const;
};

} // namespace mk

#endif
