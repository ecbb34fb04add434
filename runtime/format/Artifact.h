// A .mk file as the loader holds it once read and checked: the manifest's
// facts, and views of the sections. See docs/mk-format.md.
#ifndef MKC_RUNTIME_FORMAT_ARTIFACT_H
#define MKC_RUNTIME_FORMAT_ARTIFACT_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/SlicedValues.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mk {

// One weight in the weights section: bf16, row-major [rows, cols], aligned.
struct WeightEntry {
  std::string name;
  uint64_t rows = 0, cols = 0;
  uint64_t offset = 0; // in bf16 elements from the start of the weights section
};

// What the model's own files say about generation; see manifest.proto.
struct GenerationFacts {
  std::optional<int64_t> bosToken;
  std::string chatTemplate;
  std::optional<float> temperature, topP;
  std::optional<int64_t> topK;
  std::string tokenizerSource;
};

struct ModelFacts {
  int64_t numLayers = 0, hidden = 0, numHeads = 0, numKvHeads = 0, headDim = 0, vocab = 0;
  int64_t maxContext = 0;          // the context the schedule was compiled for
  std::vector<int64_t> eosTokens;  // generation stops at any of them
  std::string targetArch;          // e.g. "sm_90a"
  uint32_t numSms = 0;
  std::string compilerVersion;
  std::string kernelFingerprint;   // hash of the CUBIN
  // The kernel's tuning as mkc compile's flags (codegen's KernelOptions),
  // so that a timing can be traced to its build; "": not recorded.
  std::string kernelOptions;
  GenerationFacts generation;
};

// The megakernel of a tensor-parallel build's ranks (RankKernel.h).
struct RankKernel {
  uint32_t ncclVersion = 0; // NCCL_VERSION_CODE of the headers it was linked with
  std::vector<uint8_t> cubin;
};

struct Artifact {
  ModelFacts facts;
  std::vector<WeightEntry> weights;
  TaskGraph graph;     // for the validator, the CPU executor and inspect
  Schedule schedule;
  std::vector<uint8_t> scheduleBlob; // MkBlobHeader..., see ScheduleBlob.h
  std::vector<uint8_t> cubin;        // empty when compiled without NVRTC
  std::string ptx;
  std::string tokenizerJson;         // the TOKENIZER section; empty: none
  // The ROWSTEPS section: a prefill chunk (one sequence, on the task graph's
  // KV caches) and batches, each validated; run by the CPU executor.
  std::vector<ScheduledGraph> rowSteps;
  // The ROWKERNELS section: the CUBIN of each row step's megakernel, in
  // rowSteps' order, empty for a step the kernel does not run (a prefill
  // chunk, so far); none at all without NVRTC or with --no-kernel.
  std::vector<std::vector<uint8_t>> rowKernels;
  // The RANKS section: tensor parallel, every rank's decode graph (on one
  // schedule) and the slices of the weights they name, made from the WEIGHTS
  // section's at load; run by the CPU executor (docs/tensor-parallel.md).
  std::vector<ScheduledGraph> ranks;
  std::vector<WeightSlice> weightSlices;
  // The RANKKERNEL section: the kernel every rank runs; empty without one.
  RankKernel rankKernel;
  std::span<const uint16_t> weightData; // bf16, the weights section (mapped)
  // Set when weightData is a mapped file: lets the pages of a range of it go
  // once read (copied to the GPU), so that loading a big model does not keep
  // it all resident. Reading the range again maps it again.
  std::function<void(std::span<const uint8_t>)> releasePages;
};

} // namespace mk

#endif
