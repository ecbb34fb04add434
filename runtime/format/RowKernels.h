// The megakernels of the steps of several rows (the ROWKERNELS section,
// docs/mk-format.md): one CUBIN per ROWSTEPS step, and the artifact that
// runs such a step on the GPU.
#ifndef MKC_RUNTIME_FORMAT_ROWKERNELS_H
#define MKC_RUNTIME_FORMAT_ROWKERNELS_H

#include "runtime/format/Artifact.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mk {

// "" when `kernels` fit `rowSteps`: none, or one per step, each empty or a
// CUBIN (an ELF image), else why not, naming the step.
std::string checkRowKernels(const std::vector<ScheduledGraph> &rowSteps,
                            const std::vector<std::vector<uint8_t>> &kernels);

// Whether row step `step` has its kernel.
inline bool hasRowKernel(const Artifact &artifact, size_t step) {
  return step < artifact.rowKernels.size() && !artifact.rowKernels[step].empty();
}

// The section: u32 count, then count x (u64 length, length bytes).
std::vector<uint8_t> encodeRowKernels(const std::vector<std::vector<uint8_t>> &kernels);
std::string decodeRowKernels(std::span<const uint8_t> bytes,
                             std::vector<std::vector<uint8_t>> &kernels);

// The artifact that runs row step `step` (a batch) on the GPU: the same
// facts and weights (viewed, not copied), the step's graph and schedule,
// its schedule blob built here, its kernel from ROWKERNELS. nullptr with
// `error` set when the step has no kernel or its blob cannot be built.
std::unique_ptr<Artifact> rowStepArtifact(const Artifact &artifact, size_t step,
                                          std::string &error);

} // namespace mk

#endif
