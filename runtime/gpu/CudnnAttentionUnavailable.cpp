// CudnnAttention in a build without cudnn_frontend's headers or cudnn.h
// (scripts/setup.sh fetches the first; the CUDA toolkit has the second):
// prompts keep the prompt kernels' attention.
#include "runtime/gpu/CudnnAttention.h"

namespace mk {

std::unique_ptr<CudnnAttention> CudnnAttention::create(const CudaDriver &, std::string &whyNot) {
  whyNot = "this libmkrt was built without cudnn_frontend's headers (scripts/setup.sh fetches "
           "them)";
  return nullptr;
}

} // namespace mk
