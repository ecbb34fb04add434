// A prompt's attention by cuDNN's fused flash attention, a choice beside the
// prompt kernels' own (codegen/device/PrefillAttention.cuh): cuDNN's graph
// API through the headers of cudnn_frontend (scripts/setup.sh fetches
// them), cuDNN itself opened at run time as cuBLASLt is (CublasLt.h), so
// that nothing links against it and a machine without it runs the prompt
// kernels' attention. Prompts take it wherever it runs, being the faster
// at every length measured; MKRT_PREFILL_ATTENTION=own declines it, =cudnn
// insists (docs/m-token-steps.md).
//
// It reads what the prompt kernels' attention reads: the queries (bf16
// [rows][heads][dim], rotated and normed by the prepare kernel) and the KV
// caches of bf16 elements, [positions][kv heads][dim], which the prepare
// kernel has written for the pass's rows; and writes the bf16 input of the
// next Gemv, [rows][heads][dim]. Row r of a pass attends to positions up to
// firstPosition + r: cuDNN's causal mask aligned to the bottom right of a
// pass of `rows` queries over firstPosition + rows keys, both lengths given
// at run time (its padding mask), so one graph serves every pass of the
// same padded row count, which the warm-up builds.
#ifndef MKC_RUNTIME_GPU_CUDNNATTENTION_H
#define MKC_RUNTIME_GPU_CUDNNATTENTION_H

#include "runtime/gpu/CudaDriver.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mk {

// One attention operation's shape, as the graph is built for it.
struct CudnnAttentionShape {
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  int64_t positions = 0; // each KV head's positions in the caches (head-major: their stride)
  float scale = 0;       // of q . k
};

class CudnnAttention {
public:
  // nullptr with `whyNot` set when cuDNN cannot run here: built without
  // cudnn_frontend's headers, no libcudnn.so.9 (MKRT_CUDNN names one), a
  // cuDNN older than the causal mask aligned to the bottom right needs
  // (9.6), or no handle on the current context.
  static std::unique_ptr<CudnnAttention> create(const CudaDriver &cuda, std::string &whyNot);
  virtual ~CudnnAttention() = default;

  // Whether cuDNN's own rules take the graph of `shape` for `paddedRows`
  // rows on an sm_`sm` device (its validation, which needs no device): ""
  // or why not, also when no cuDNN is found.
  static std::string checkShape(const CudnnAttentionShape &shape, int64_t paddedRows, int sm);

  // "cuDNN 9.24.0's fused attention"
  virtual std::string describe() const = 0;

  // Builds the graph of `shape` for passes of `paddedRows` rows, once:
  // false with `whyNot` when cuDNN refuses the shape.
  virtual bool prepare(const CudnnAttentionShape &shape, int64_t paddedRows,
                       std::string &whyNot) = 0;

  // Sets the lengths the next passes run with: `rows` queries (at most the
  // padded rows of the graph run) over firstPosition + rows positions.
  // Ordered on the legacy default stream, as the prompt's kernels are.
  virtual bool setLengths(int64_t rows, int64_t firstPosition, std::string &error) = 0;

  // One attention over the lengths last set, on the legacy default stream,
  // by the graph prepare() built (built now if it did not).
  virtual bool run(const CudnnAttentionShape &shape, int64_t paddedRows, CUdeviceptr queries,
                   CUdeviceptr keys, CUdeviceptr values, CUdeviceptr output,
                   std::string &error) = 0;
};

} // namespace mk

#endif
