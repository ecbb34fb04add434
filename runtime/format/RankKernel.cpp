#include "runtime/format/RankKernel.h"

#include "core/weights/SlicedValues.h"
#include "runtime/format/ScheduleBlobBuilder.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace mk {

namespace {

bool isElf(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

constexpr size_t kHeaderBytes = 8; // u32 NCCL version, u32 0

} // namespace

std::string ncclVersionText(uint32_t code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

std::string checkRankKernel(const std::vector<ScheduledGraph> &ranks, const RankKernel &kernel) {
  if (kernel.cubin.empty())
    return "";
  if (ranks.empty())
    return "a kernel of ranks in a file of no ranks (no RANKS section)";
  if (!isElf(kernel.cubin))
    return "the kernel is not a CUBIN (no ELF header)";
  if (kernel.ncclVersion == 0)
    return "the kernel names no NCCL version";
  return "";
}

std::vector<uint8_t> encodeRankKernel(const RankKernel &kernel) {
  std::vector<uint8_t> bytes(kHeaderBytes + kernel.cubin.size(), 0);
  std::memcpy(bytes.data(), &kernel.ncclVersion, sizeof kernel.ncclVersion); // little-endian
  std::copy(kernel.cubin.begin(), kernel.cubin.end(), bytes.begin() + kHeaderBytes);
  return bytes;
}

std::string decodeRankKernel(std::span<const uint8_t> bytes, RankKernel &kernel) {
  kernel = {};
  if (bytes.empty())
    return "";
  if (bytes.size() < kHeaderBytes)
    return "its header needs " + std::to_string(kHeaderBytes) + " bytes, the section has " +
           std::to_string(bytes.size());
  uint32_t reserved = 0;
  std::memcpy(&kernel.ncclVersion, bytes.data(), sizeof kernel.ncclVersion);
  std::memcpy(&reserved, bytes.data() + 4, sizeof reserved);
  if (reserved != 0)
    return "bytes 4-7 must be 0, got " + std::to_string(reserved);
  kernel.cubin.assign(bytes.begin() + kHeaderBytes, bytes.end());
  return "";
}

std::unique_ptr<RankArtifact> rankArtifact(const Artifact &artifact, size_t rank,
                                           std::string &error) {
  if (rank >= artifact.ranks.size() || artifact.rankKernel.cubin.empty()) {
    error = "the file holds no kernel of ranks (compiled without --tensor-parallel, without "
            "NVRTC or NCCL's device API, or with --no-kernel)";
    return nullptr;
  }
  const ScheduledGraph &ranked = artifact.ranks[rank];
  auto view = std::make_unique<RankArtifact>();
  WeightTable weights = viewWeights(artifact.weights, artifact.weightData);
  addWeightSlices(weights, artifact.weightSlices);
  if (!packWeights(ranked.graph, weights, view->weights, error)) {
    error = "rank " + std::to_string(rank) + "'s weights: " + error;
    return nullptr;
  }
  Artifact &out = view->artifact;
  out.facts = artifact.facts;
  out.weights = view->weights.index;
  out.weightData = view->weights.data;
  out.graph = ranked.graph;
  out.schedule = ranked.schedule;
  out.cubin = artifact.rankKernel.cubin;
  try {
    out.scheduleBlob = buildScheduleBlob(ranked.graph, ranked.schedule, out.weights, out.weightData);
  } catch (const ScheduleBlobError &blobError) {
    error = "rank " + std::to_string(rank) + "'s schedule does not fit its weights: " +
            blobError.what();
    return nullptr;
  }
  return view;
}

} // namespace mk
