// The toy model of ToyTaskGraph.h as a .mk file, and tools to take such a
// file apart and put it back together with valid checksums, so that tests
// can corrupt one thing at a time and see which check refuses it.
#ifndef MKC_TESTS_UNIT_TOYARTIFACT_H
#define MKC_TESTS_UNIT_TOYARTIFACT_H

#include "ToyTaskGraph.h"

#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/MkFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mk::toy {

// The toy model packed as an artifact (no kernel unless given).
std::unique_ptr<BuiltArtifact> buildToyArtifact(const ToyModel &model,
                                                ArtifactOptions options = {});

// The bytes of the .mk file of `artifact`.
std::vector<uint8_t> artifactBytes(const Artifact &artifact);

// A path under the test's temporary folder.
std::string temporaryPath(const std::string &name);

// The toy model on 4 SMs written as a .mk file under the temporary folder,
// named `fileName`; its path.
std::string writeToyModel(const std::string &fileName, ArtifactOptions options = {});

std::vector<uint8_t> readBytes(const std::string &path);
void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);

// Sections of a valid file, in file order, copied out.
struct OwnedSection {
  SectionKind kind;
  std::vector<uint8_t> bytes;
};
std::vector<OwnedSection> sectionsOf(const std::vector<uint8_t> &file);
// A file of these sections, checksums and all.
std::vector<uint8_t> assemble(const std::vector<OwnedSection> &sections);

// The toy model's weight table with every value rounded to bf16.
WeightTable roundedWeights(const WeightTable &weights);

} // namespace mk::toy

#endif
