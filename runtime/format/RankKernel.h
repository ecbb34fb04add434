// The megakernel every rank of a tensor-parallel build runs (the RANKKERNEL
// section, docs/mk-format.md): one CUBIN for all ranks, since their graphs
// and schedule differ only in the weights' values, linked with NCCL's
// device API (docs/tensor-parallel.md), and the NCCL version whose headers
// it was linked with, which the loader's NCCL must lay out its windows as.
#ifndef MKC_RUNTIME_FORMAT_RANKKERNEL_H
#define MKC_RUNTIME_FORMAT_RANKKERNEL_H

#include "runtime/format/Artifact.h"
#include "runtime/format/WeightPacking.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mk {

// "" when `kernel` fits `ranks`: no kernel, or a CUBIN (an ELF image) with
// an NCCL version for a build of several ranks; else why not.
std::string checkRankKernel(const std::vector<ScheduledGraph> &ranks, const RankKernel &kernel);

// "2.28.9" from NCCL_VERSION_CODE 22809.
std::string ncclVersionText(uint32_t code);

// The section: u32 NCCL_VERSION_CODE, u32 0, then the CUBIN to the end.
std::vector<uint8_t> encodeRankKernel(const RankKernel &kernel);
std::string decodeRankKernel(std::span<const uint8_t> bytes, RankKernel &kernel);

// What one rank's GPU runs: the file's facts, rank `rank`'s graph and
// schedule, the ranks' kernel, the rank's weights packed from the file's
// (its slices cut, in host memory: a rank's share of the model) and its
// schedule blob built from them. nullptr with `error` set when the file
// has no kernel of ranks or the blob cannot be built.
struct RankArtifact {
  Artifact artifact; // weightData views `weights`
  PackedWeights weights;
};
std::unique_ptr<RankArtifact> rankArtifact(const Artifact &artifact, size_t rank,
                                           std::string &error);

} // namespace mk

#endif
