// A prompt on the GPU, layer by layer (docs/m-token-steps.md): every row of
// the prompt through one operation before the next, the matrices by
// cuBLASLt GEMMs (CublasLt.h), the rest by the prompt kernels of the decode
// kernel's CUBIN (runtime/format/PrefillArgs.h). It writes the decode
// kernel's KV cache, so decode goes on from the prompt's last token. What
// it runs is planned from the decode graph (PrefillPlan.h); the operation
// records of the schedule blob give the weights' and caches' places.
#ifndef MKC_RUNTIME_GPU_PREFILL_H
#define MKC_RUNTIME_GPU_PREFILL_H

#include "runtime/format/ScheduleBlob.h"
#include "runtime/gpu/CublasLt.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/CudnnAttention.h"
#include "runtime/gpu/DeviceMemory.h"
#include "runtime/gpu/GpuDevice.h"
#include "runtime/gpu/PrefillPlan.h"
#include "runtime/gpu/PrefillProfile.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace mk {

// Where the loaded model is on the device.
struct PrefillModel {
  CUmodule module = nullptr; // the decode kernel's CUBIN
  CUdeviceptr weights = 0;   // the bf16 weights section
  CUdeviceptr params = 0;    // the blob's params (f32)
  CUdeviceptr kv = 0;        // the KV arena, sequence 0
  uint64_t vocab = 0;        // rows of the embedding table
};

class GpuPrefill {
public:
  // nullptr with `whyNot` set when prompts cannot run this way: no
  // cuBLASLt, a CUBIN without the prompt kernels (an older file, a head
  // dimension they do not take), a graph the plan refuses.
  static std::unique_ptr<GpuPrefill> create(const CudaDriver &cuda, const PrefillModel &model,
                                            const TaskGraph &graph,
                                            std::span<const MkOperationRecord> records,
                                            std::string &whyNot);
  ~GpuPrefill();

  // Runs `tokens` (within the vocabulary; the caller checks) at positions
  // firstPosition, firstPosition + 1, ...: their KV slots written, and with
  // `logits` non-null their logits, [tokens][vocab]. At most `maxRows` rows
  // a pass (0: kMaxRows; with logits, fewer where a pass's would pass 1
  // GiB). False with `error` when the driver or cuBLASLt fails.
  // With `caches` (one per attention operation, in order: checkCaches),
  // the prompt attends to and writes those instead of this model's own.
  bool run(std::span<const int64_t> tokens, int64_t firstPosition, std::vector<float> *logits,
           int64_t maxRows, std::string &error, std::span<const GpuCacheSlots> caches = {});

  // "" when `caches` is empty or another model's caches this one's prompts
  // can write up to position `end` (excluded): one per attention operation,
  // of its KV heads, head dimension and cache element, room for `end`.
  std::string checkCaches(std::span<const GpuCacheSlots> caches, int64_t end) const;

  // After a run without logits: the greedy pick of the last row's logits
  // (the final norm and lm_head for that row alone, then an argmax), which
  // is the first new token when the prompt ends there. False with `error`
  // when the driver or cuBLASLt fails, or a logit is NaN or infinite.
  bool firstToken(int64_t &token, std::string &error);
  // Whether firstToken() can: not when the logits' Gemv adds a residual
  // (the prompt's plan, which leaves the logits out, may reuse its space).
  bool picksFirstToken() const {
    return graph.operations[logitsOperation].epilogue != Epilogue::Residual;
  }

  // Runs a prompt of zeros at each of the GEMMs' row counts a prompt of up
  // to `positions` takes, and its first token, so that cuBLASLt has chosen
  // and loaded its kernels before the first prompt is timed. It writes KV
  // slots from 0 on: the caller clears them.
  bool warmUp(int64_t positions, std::string &error);

  // With MKRT_PREFILL_PROFILE set, prints the profile of the launches since
  // the last (PrefillProfile.h): the caller's prompt of `rows` rows, after
  // its runs and first token.
  void printProfile(int64_t rows);

  // Rows of the last run's passes.
  int64_t rowsPerPass() const { return lastRows; }

  // Which attention the prompts run: "cuDNN 9.19.0's fused attention"
  // (CudnnAttention.h) where it runs; "" for the prompt kernels' own, or why
  // they run where MKRT_PREFILL_ATTENTION=cudnn asked for cuDNN's.
  const std::string &attentionChoice() const { return attentionNote; }

  static constexpr int64_t kMaxRows = 4096;

private:
  struct Gemm; // one cuBLASLt matmul's descriptors and algorithm, by shape
  GpuPrefill(const CudaDriver &cuda, const CublasLt &blas, const PrefillModel &model,
             TaskGraph graph, std::span<const MkOperationRecord> records);
  bool check(CUresult result, const char *what, std::string &error) const;
  bool checkBlas(cublasStatus_t status, const char *what, std::string &error) const;
  bool launch(CUfunction function, unsigned gridX, unsigned gridY, unsigned threads,
              const void *args, const char *what, std::string &error, unsigned sharedBytes = 0,
              double flops = 0);
  bool gemm(CUdeviceptr weight, CUdeviceptr input, CUdeviceptr output, uint64_t n, uint64_t k,
            uint64_t rows, uint64_t outputStride, std::string &error, CUdeviceptr accumulate = 0,
            bool bf16Output = false);
  bool reserve(const PrefillPlan &plan, int64_t rows, std::string &error);
  // A Gemv's GEMM input (its norm, unless `inputReady`: the operation
  // before wrote it), GEMMs and epilogue over `rows` rows (`padded` rows
  // for the GEMMs) of the given buffers; with `feedsNext` its epilogue also
  // writes the next Gemv's GEMM input (PrefillPlan::feedsNextGemm), and
  // `output` 0 writes no f32 output.
  bool gemv(const Operation &op, const MkOperationRecord &record, CUdeviceptr input,
            CUdeviceptr residual, CUdeviceptr output, uint64_t rows, uint64_t padded,
            std::string &error, bool feedsNext = false, bool inputReady = false);
  bool pass(const PrefillPlan &plan, std::span<const int64_t> tokens, int64_t firstPosition,
            float *logits, std::span<const GpuCacheSlots> caches, std::string &error);
  CUfunction function(const std::string &name) const;
  // Takes cuDNN's attention where every attention of the graph can have it
  // (bf16 caches, cuDNN found and taking the shapes) and
  // MKRT_PREFILL_ATTENTION is not "own"; else, where it was "cudnn", says
  // why not.
  void chooseAttention();
  // `capacity`: each KV head's positions in the caches it reads (the
  // model's context, or the caches' it was given).
  CudnnAttentionShape cudnnShape(const Operation &op, const MkOperationRecord &record,
                                 int64_t capacity) const;

  const CudaDriver &cuda;
  const CublasLt &blas;
  PrefillModel model;
  TaskGraph graph; // the decode graph as prompts run it (promptGraph), without its tasks
  std::vector<MkOperationRecord> records;
  PrefillPlan prompt, withLogits;
  CUfunction embed = nullptr, norm = nullptr, epilogue = nullptr, argmax = nullptr;
  uint32_t logitsOperation = 0; // the lm_head Gemv
  std::map<std::pair<int64_t, uint64_t>, std::pair<CUfunction, CUfunction>> attention; // prepare, attend
  std::unique_ptr<CudnnAttention> cudnn; // set: attentions that write a GEMM input run on it
  std::string attentionNote;
  cublasLtHandle_t handle = nullptr;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, bool>, std::unique_ptr<Gemm>> gemms;
  DeviceMemory arena, gemmInput, gemmOutput, queries, tokenRows, workspace, lastLogits, picked;
  int64_t reservedRows = 0, lastRows = 0;
  uint64_t lastPassRows = 0, lastPassPadded = 0; // where the last run's last row is
  const PrefillPlan *reservedFor = nullptr;
  PrefillProfile profile;
};

} // namespace mk

#endif
