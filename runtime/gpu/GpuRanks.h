// A tensor-parallel model on N GPUs of one process (docs/tensor-parallel.md):
// GPU r runs rank r's graph with the ranks' kernel (the .mk's RANKKERNEL),
// its weights cut from the file's (rankArtifact). One NCCL communicator
// over the N GPUs gives each rank a window holding its event counters and
// activation arena, in which the kernels read each other's (MkRanks). A run
// launches every rank's kernel together, one host thread a GPU, each once
// every rank's counters are cleared, and answers with rank 0's tokens,
// having checked that every rank picked the same ones.
//
// On one GPU (RanksPlacement::OneGpu), a check of the kernel of ranks: every
// rank on GPU 0, on its share of the SMs (the file compiled with --num-sms
// of at most SMs / N), each kernel on its own stream, reading the others'
// memory directly; no NCCL.
#ifndef MKC_RUNTIME_GPU_GPURANKS_H
#define MKC_RUNTIME_GPU_GPURANKS_H

#include "runtime/gpu/GpuDevice.h"

#include <memory>
#include <string>

namespace mk {

enum class RanksPlacement { OwnGpus, OneGpu };

class GpuRanks {
public:
  // Opens GPUs 0..N-1 for the file's N ranks and loads them: Ok,
  // Unsupported (fewer GPUs, no NCCL or another version than the kernel
  // was linked with, no kernel of ranks), or Failed, with `error` saying
  // why when not Ok.
  static std::unique_ptr<GpuRanks> open(const Artifact &artifact, int64_t maxContext,
                                        RanksPlacement placement, GpuStatus &status,
                                        std::string &error);
  virtual ~GpuRanks() = default;

  virtual std::string describe() const = 0; // "2 x NVIDIA H200, sm_90, 132 SMs; NCCL 2.28.9"
  virtual int ranks() const = 0;
  // One launch on every rank, as GpuDevice::run (no streaming): rank 0's
  // result, its trace of rank 0's tasks; Failed when a rank fails or the
  // ranks disagree.
  virtual GpuStatus run(const GpuRunRequest &request, GpuRunResult &result,
                        std::string &error) = 0;
};

} // namespace mk

#endif
