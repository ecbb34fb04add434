#include "ToyArtifact.h"

#include "runtime/format/ArtifactFile.h"
#include "runtime/format/Bf16.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace mk::toy {

std::unique_ptr<BuiltArtifact> buildToyArtifact(const ToyModel &model, ArtifactOptions options) {
  options.compilerVersion = "mkc toy";
  std::string error;
  auto built = buildArtifact(model.graph, model.schedule, model.weights, std::move(options), error);
  if (!built)
    throw std::runtime_error("the toy model does not build: " + error);
  return built;
}

std::vector<uint8_t> artifactBytes(const Artifact &artifact) {
  std::string path = temporaryPath("artifact_bytes.mk");
  std::string error;
  if (!writeArtifact(path, artifact, error))
    throw std::runtime_error(error);
  return readBytes(path);
}

std::string temporaryPath(const std::string &name) {
  const ::testing::TestInfo *test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string prefix = test ? std::string(test->test_suite_name()) + "_" + test->name() + "_" : "";
  return ::testing::TempDir() + "mk_" + prefix + name;
}

std::string writeToyModel(const std::string &fileName, ArtifactOptions options) {
  auto built = buildToyArtifact(buildToyModel(4), std::move(options));
  std::string path = temporaryPath(fileName);
  std::string error;
  if (!writeArtifact(path, built->artifact, error))
    throw std::runtime_error(error);
  return path;
}

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<OwnedSection> sectionsOf(const std::vector<uint8_t> &bytes) {
  std::string error;
  auto file = MkFile::view(bytes, error);
  if (!file)
    throw std::runtime_error(error);
  std::vector<OwnedSection> sections;
  for (const SectionEntry &entry : file->entries())
    sections.push_back({static_cast<SectionKind>(entry.kind),
                        std::vector<uint8_t>(bytes.begin() + entry.offset,
                                             bytes.begin() + entry.offset + entry.size)});
  return sections;
}

std::vector<uint8_t> assemble(const std::vector<OwnedSection> &sections) {
  std::vector<SectionData> views;
  for (const OwnedSection &section : sections)
    views.push_back({section.kind, section.bytes});
  std::ostringstream stream(std::ios::binary);
  std::string error;
  if (!writeMkFile(stream, views, error))
    throw std::runtime_error(error);
  std::string text = stream.str();
  return std::vector<uint8_t>(text.begin(), text.end());
}

WeightTable roundedWeights(const WeightTable &weights) {
  WeightTable rounded;
  for (const auto &[name, weight] : weights.all()) {
    Weight copy = weight;
    for (float &value : copy.values)
      value = roundToBf16(value);
    rounded.add(std::move(copy));
  }
  return rounded;
}

} // namespace mk::toy
