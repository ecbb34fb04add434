// libFuzzer target: the .mk reader and the loader's checks (runtime/format,
// core/validator) on arbitrary bytes. A checksum only stops accidents, so a
// custom mutator also edits the sections of a file that parses and seals
// the checksums again: the edits then reach the manifest, task-graph and
// schedule decoders and the validator, which must refuse what is wrong.
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/MkFile.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

// The sections of `bytes`, read as the reader's placement rules allow but
// without their checksums (an input the mutator made, or a damaged one).
bool sectionsOf(const uint8_t *data, size_t size,
                std::vector<std::pair<mk::SectionKind, std::vector<uint8_t>>> &sections) {
  std::string error;
  auto file = mk::MkFile::view(std::span(data, size), error);
  if (!file)
    return false;
  for (const mk::SectionEntry &entry : file->entries())
    sections.push_back({static_cast<mk::SectionKind>(entry.kind),
                        std::vector<uint8_t>(data + entry.offset,
                                             data + entry.offset + entry.size)});
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto file = mk::MkFile::view(std::span(data, size), error);
  if (!file)
    return 0;
  // loadArtifact decodes every section and validates the task graph.
  (void)mk::loadArtifact(std::move(file), error);
  return 0;
}

// Half the time: mutate one section of a sound file and write it again with
// fresh checksums; else libFuzzer's own byte-level mutations.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::minstd_rand random(seed);
  std::vector<std::pair<mk::SectionKind, std::vector<uint8_t>>> sections;
  if (random() % 2 == 0 || !sectionsOf(data, size, sections) || sections.empty())
    return LLVMFuzzerMutate(data, size, maxSize);
  std::vector<uint8_t> &target = sections[random() % sections.size()].second;
  size_t room = target.size() + 64;
  target.resize(room);
  target.resize(LLVMFuzzerMutate(target.data(), room - 64, room));
  std::vector<mk::SectionData> views;
  for (const auto &[kind, bytes] : sections)
    views.push_back({kind, bytes});
  std::ostringstream out;
  std::string error;
  if (!mk::writeMkFile(out, views, error))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string written = out.str();
  if (written.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, written.data(), written.size());
  return written.size();
}
