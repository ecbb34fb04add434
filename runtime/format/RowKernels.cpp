#include "runtime/format/RowKernels.h"

#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/format/WeightPacking.h"

#include <cstring>
#include <map>

namespace mk {

namespace {

bool isElf(const std::vector<uint8_t> &bytes) {
  return bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

template <class T> void put(std::vector<uint8_t> &bytes, T value) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof value); // little-endian hosts only, as the whole format
  bytes.insert(bytes.end(), raw, raw + sizeof raw);
}

} // namespace

std::string checkRowKernels(const std::vector<ScheduledGraph> &rowSteps,
                            const std::vector<std::vector<uint8_t>> &kernels) {
  if (kernels.empty())
    return "";
  if (kernels.size() != rowSteps.size())
    return std::to_string(kernels.size()) + " kernels for " + std::to_string(rowSteps.size()) +
           " steps of several rows";
  for (size_t step = 0; step < kernels.size(); ++step)
    if (!kernels[step].empty() && !isElf(kernels[step]))
      return "step " + std::to_string(step) + "'s kernel is not a CUBIN (no ELF header)";
  return "";
}

std::vector<uint8_t> encodeRowKernels(const std::vector<std::vector<uint8_t>> &kernels) {
  std::vector<uint8_t> bytes;
  put<uint32_t>(bytes, static_cast<uint32_t>(kernels.size()));
  for (const std::vector<uint8_t> &kernel : kernels) {
    put<uint64_t>(bytes, kernel.size());
    bytes.insert(bytes.end(), kernel.begin(), kernel.end());
  }
  return bytes;
}

std::string decodeRowKernels(std::span<const uint8_t> bytes,
                             std::vector<std::vector<uint8_t>> &kernels) {
  kernels.clear();
  if (bytes.empty())
    return "";
  uint64_t at = 0;
  auto read = [&](void *into, uint64_t size) {
    if (bytes.size() - at < size)
      return false;
    std::memcpy(into, bytes.data() + at, size);
    at += size;
    return true;
  };
  uint32_t count = 0;
  if (!read(&count, sizeof count))
    return "a count of kernels needs 4 bytes, the section has " + std::to_string(bytes.size());
  std::vector<std::vector<uint8_t>> decoded;
  for (uint32_t index = 0; index < count; ++index) {
    uint64_t length = 0;
    if (!read(&length, sizeof length))
      return "kernel " + std::to_string(index) + "'s length at byte " + std::to_string(at) +
             " is past the section's end";
    if (bytes.size() - at < length)
      return "kernel " + std::to_string(index) + " of " + std::to_string(length) +
             " bytes at byte " + std::to_string(at) + " is past the section's " +
             std::to_string(bytes.size()) + " bytes";
    decoded.emplace_back(bytes.begin() + at, bytes.begin() + at + length);
    at += length;
  }
  if (at != bytes.size())
    return std::to_string(bytes.size() - at) + " trailing bytes at byte " + std::to_string(at);
  kernels = std::move(decoded);
  return "";
}

std::unique_ptr<Artifact> rowStepArtifact(const Artifact &artifact, size_t step,
                                          std::string &error) {
  if (step >= artifact.rowSteps.size() || step >= artifact.rowKernels.size() ||
      artifact.rowKernels[step].empty()) {
    error = "the file holds no kernel for this step (a prefill chunk, or a file compiled "
            "without one)";
    return nullptr;
  }
  const ScheduledGraph &rows = artifact.rowSteps[step];
  auto view = std::make_unique<Artifact>();
  view->facts = artifact.facts;
  view->weights = artifact.weights;
  view->weightData = artifact.weightData;
  view->graph = rows.graph;
  view->schedule = rows.schedule;
  view->cubin = artifact.rowKernels[step];
  try {
    view->scheduleBlob =
        buildScheduleBlob(rows.graph, rows.schedule, artifact.weights, artifact.weightData);
  } catch (const ScheduleBlobError &blobError) {
    error = std::string("the step's schedule does not fit its weights: ") + blobError.what();
    return nullptr;
  }
  return view;
}

} // namespace mk
