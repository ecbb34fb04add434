// The MANIFEST section (manifest.proto) as plain structs, so that nothing
// outside Manifest.cpp sees protobuf.
#ifndef MKC_RUNTIME_FORMAT_MANIFEST_H
#define MKC_RUNTIME_FORMAT_MANIFEST_H

#include "runtime/format/Artifact.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mk {

// The same numbers as the schedule blob's header, for readers of the
// manifest alone.
struct BufferLayout {
  uint64_t activationElements = 0, kvElements = 0, params = 0;
  uint64_t tokenSlot = 0, logitsOffset = 0, logitsLength = 0;
};

struct Manifest {
  ModelFacts facts;
  std::vector<WeightEntry> weights;
  BufferLayout layout;
  bool hasKernel = false;
};

std::vector<uint8_t> encodeManifest(const Manifest &manifest);

// "" on success, else what is wrong.
std::string decodeManifest(std::span<const uint8_t> bytes, Manifest &manifest);

} // namespace mk

#endif
