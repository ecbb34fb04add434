// The .mk container: what is written reads back, and every kind of damage —
// truncation, a flipped bit anywhere, a bad magic or version, a section
// table pointing out of bounds, a missing section — is refused with a
// message naming the section or the offset.
#include "ToyArtifact.h"

#include "runtime/format/Crc32.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/MkFileLayout.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace mk {
namespace {

using toy::assemble;
using toy::OwnedSection;

std::vector<uint8_t> filled(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

std::vector<OwnedSection> sampleSections() {
  return {{SectionKind::Manifest, filled(100, 1)},
          {SectionKind::TaskGraph, filled(333, 2)},
          {SectionKind::Schedule, filled(64, 3)},
          {SectionKind::Ptx, filled(5, 4)},
          {SectionKind::Cubin, {}},
          {SectionKind::Weights, filled(5000, 5)}};
}

std::string openError(const std::vector<uint8_t> &bytes) {
  std::string path = toy::temporaryPath("file.mk");
  toy::writeBytes(path, bytes);
  std::string error;
  auto file = MkFile::open(path, error);
  EXPECT_EQ(file, nullptr) << "accepted";
  return error;
}

void expectMessage(const std::string &message, const std::vector<std::string> &fragments) {
  EXPECT_FALSE(message.empty());
  for (const std::string &fragment : fragments)
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "message: " << message << "\nlacks: " << fragment;
}

SectionEntry entryOf(const std::vector<uint8_t> &bytes, SectionKind kind) {
  std::string error;
  auto file = MkFile::view(bytes, error);
  for (const SectionEntry &entry : file->entries())
    if (entry.kind == static_cast<uint32_t>(kind))
      return entry;
  throw std::runtime_error("no such section");
}

// Rewrites table entry `index` and fixes the table's and the header's
// checksums, so that only the placement checks stand between it and a reader.
void patchEntry(std::vector<uint8_t> &bytes, size_t index, uint64_t offset, uint64_t size,
                uint32_t kind = 0) {
  uint8_t *entry = bytes.data() + kMkHeaderBytes + index * kMkSectionEntryBytes;
  layout::put64(entry + layout::kEntryOffset, offset);
  layout::put64(entry + layout::kEntrySize, size);
  if (kind)
    layout::put32(entry + layout::kEntryKind, kind);
  uint32_t count = layout::get32(bytes.data() + layout::kSectionCount);
  layout::put32(bytes.data() + layout::kTableCrc,
                crc32(std::span(bytes.data() + kMkHeaderBytes, count * kMkSectionEntryBytes)));
  layout::put32(bytes.data() + layout::kHeaderCrc,
                crc32(std::span<const uint8_t>(bytes.data(), layout::kHeaderCrc)));
}

TEST(MkFile, ReadsBackWhatWasWrittenWithEverySectionAligned) {
  std::vector<OwnedSection> sections = sampleSections();
  std::string path = toy::temporaryPath("roundtrip.mk");
  toy::writeBytes(path, assemble(sections));
  std::string error;
  auto file = MkFile::open(path, error);
  ASSERT_NE(file, nullptr) << error;
  for (const OwnedSection &section : sections) {
    std::span<const uint8_t> read = file->section(section.kind);
    EXPECT_TRUE(std::equal(read.begin(), read.end(), section.bytes.begin(), section.bytes.end()))
        << sectionKindName(section.kind);
  }
  for (const SectionEntry &entry : file->entries()) {
    uint64_t alignment = entry.kind == static_cast<uint32_t>(SectionKind::Weights)
                             ? kMkWeightsAlignment
                             : kMkSectionAlignment;
    EXPECT_EQ(entry.offset % alignment, 0u) << sectionKindName(entry.kind);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(file->section(SectionKind::Weights).data()) % 4096, 0u);
}

// The visitor sees every byte of every section once, in order, a MiB at a
// time at most, as the checksums are taken: what the loader's finite check
// of WEIGHTS reads instead of passing over the file again.
TEST(MkFile, ShowsEverySectionPieceByPieceOnItsOnePass) {
  std::vector<OwnedSection> sections = sampleSections();
  sections.back().bytes = filled((uint64_t{5} << 20) / 2 + 3, 9); // 2.5 MiB of WEIGHTS
  std::string path = toy::temporaryPath("pieces.mk");
  toy::writeBytes(path, assemble(sections));
  std::map<SectionKind, std::vector<uint8_t>> seen;
  size_t largest = 0;
  std::string error;
  auto file = MkFile::open(path, error, [&](SectionKind kind, uint64_t offset,
                                            std::span<const uint8_t> piece) {
    std::vector<uint8_t> &bytes = seen[kind];
    EXPECT_EQ(offset, bytes.size()) << sectionKindName(kind);
    bytes.insert(bytes.end(), piece.begin(), piece.end());
    largest = std::max(largest, piece.size());
  });
  ASSERT_NE(file, nullptr) << error;
  for (const OwnedSection &section : sections)
    EXPECT_EQ(seen[section.kind], section.bytes) << sectionKindName(section.kind);
  EXPECT_EQ(largest, size_t{1} << 20);
}

TEST(MkFile, RefusesAFileTruncatedAnywhere) {
  std::vector<uint8_t> bytes = assemble(sampleSections());
  EXPECT_NE(openError({}).find("truncated file: it is empty"), std::string::npos);
  for (size_t size : {size_t(5), size_t(8), size_t(40), size_t(63)})
    expectMessage(openError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + size)),
                  {"truncated file: " + std::to_string(size) + " bytes"});
  expectMessage(openError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 100)),
                {"truncated file: 100 bytes", "the section table ends at"});
  for (const OwnedSection &section : sampleSections()) {
    if (section.bytes.empty())
      continue;
    SectionEntry entry = entryOf(bytes, section.kind);
    for (uint64_t cut :
         {entry.offset, entry.offset + entry.size / 2, entry.offset + entry.size - 1})
      expectMessage(openError(std::vector<uint8_t>(bytes.begin(), bytes.begin() + cut)),
                    {"truncated file: " + std::to_string(cut) + " bytes",
                     "section " + sectionKindName(section.kind) + " (bytes [" +
                         std::to_string(entry.offset) + ", ",
                     "ends past the end of the file"});
  }
}

TEST(MkFile, RefusesAFlippedBitInEverySection) {
  std::vector<uint8_t> bytes = assemble(sampleSections());
  for (const OwnedSection &section : sampleSections()) {
    if (section.bytes.empty())
      continue;
    SectionEntry entry = entryOf(bytes, section.kind);
    for (uint64_t at : {entry.offset, entry.offset + entry.size / 2, entry.offset + entry.size - 1})
      for (int bit : {0, 7}) {
        std::vector<uint8_t> flipped = bytes;
        flipped[at] ^= uint8_t(1u << bit);
        expectMessage(openError(flipped),
                      {"checksum mismatch in section " + sectionKindName(section.kind) +
                       " (bytes [" + std::to_string(entry.offset) + ", "});
      }
  }
}

TEST(MkFile, RefusesAFlippedBitInTheHeaderOrTable) {
  std::vector<uint8_t> bytes = assemble(sampleSections());
  uint64_t tableEnd = kMkHeaderBytes + 6 * kMkSectionEntryBytes;
  for (uint64_t at = 0; at < tableEnd; ++at) {
    std::vector<uint8_t> flipped = bytes;
    flipped[at] ^= 0x10;
    std::string message = openError(flipped);
    if (at < 8)
      expectMessage(message, {"bad magic at offset 0"});
    else if (at < 12)
      expectMessage(message, {"unsupported format version", "at offset 8"});
    else if (at < kMkHeaderBytes)
      expectMessage(message, {"checksum mismatch in the header"});
    else
      expectMessage(message, {"checksum mismatch in the section table (offset 64)"});
  }
}

TEST(MkFile, RefusesAnUnsupportedVersion) {
  std::vector<uint8_t> bytes = assemble(sampleSections());
  layout::put32(bytes.data() + layout::kVersion, kMkFormatVersion + 1);
  expectMessage(openError(bytes),
                {"unsupported format version " + std::to_string(kMkFormatVersion + 1) +
                     " at offset 8",
                 "supports version " + std::to_string(kMkFormatVersion)});
}

TEST(MkFile, RefusesASectionTablePointingOutOfBounds) {
  std::vector<uint8_t> bytes = assemble(sampleSections());
  SectionEntry weights = entryOf(bytes, SectionKind::Weights);
  size_t index = 5; // weights come last in sampleSections()

  std::vector<uint8_t> past = bytes;
  patchEntry(past, index, weights.offset, weights.size + 1);
  expectMessage(openError(past),
                {"section WEIGHTS (table entry 5, offset " + std::to_string(weights.offset),
                 "is out of bounds"});

  std::vector<uint8_t> wrapping = bytes;
  patchEntry(wrapping, index, weights.offset, UINT64_MAX - 10);
  expectMessage(openError(wrapping), {"section WEIGHTS", "is out of bounds"});

  std::vector<uint8_t> intoTable = bytes;
  patchEntry(intoTable, 0, 0, 64);
  expectMessage(openError(intoTable),
                {"section MANIFEST (table entry 0, offset 0", "out of bounds"});

  std::vector<uint8_t> misaligned = bytes;
  patchEntry(misaligned, index, weights.offset + 64, weights.size - 64);
  expectMessage(openError(misaligned),
                {"section WEIGHTS (bytes [" + std::to_string(weights.offset + 64),
                 "is not aligned to 4096 bytes"});

  SectionEntry manifest = entryOf(bytes, SectionKind::Manifest);
  std::vector<uint8_t> overlapping = bytes;
  patchEntry(overlapping, 1, manifest.offset, 64);
  expectMessage(openError(overlapping), {"section TASKGRAPH", "overlaps section MANIFEST"});

  std::vector<uint8_t> duplicate = bytes;
  patchEntry(duplicate, 1, entryOf(bytes, SectionKind::TaskGraph).offset, 333,
             static_cast<uint32_t>(SectionKind::Manifest));
  expectMessage(openError(duplicate), {"section MANIFEST appears twice"});

  std::vector<uint8_t> hugeTable = bytes;
  layout::put32(hugeTable.data() + layout::kSectionCount, 1000000);
  layout::put32(hugeTable.data() + layout::kHeaderCrc,
                crc32(std::span<const uint8_t>(hugeTable.data(), layout::kHeaderCrc)));
  expectMessage(openError(hugeTable), {"1000000 sections"});
}

TEST(MkFile, RefusesAMissingSectionAndTrailingBytes) {
  for (size_t drop = 0; drop < sampleSections().size(); ++drop) {
    std::vector<OwnedSection> sections = sampleSections();
    std::string name = sectionKindName(sections[drop].kind);
    sections.erase(sections.begin() + drop);
    expectMessage(openError(assemble(sections)), {"missing required section " + name});
  }
  std::vector<uint8_t> longer = assemble(sampleSections());
  longer.push_back(0);
  expectMessage(openError(longer),
                {"trailing bytes from offset " + std::to_string(longer.size() - 1)});
}

// Rewrites the table's and the header's checksums after an edit, so that the
// edit is seen by the checks after them, as a deliberate one would be.
void resealHeaderAndTable(std::vector<uint8_t> &bytes) {
  uint32_t count = layout::get32(bytes.data() + layout::kSectionCount);
  layout::put32(bytes.data() + layout::kTableCrc,
                crc32(std::span(bytes.data() + kMkHeaderBytes, count * kMkSectionEntryBytes)));
  layout::put32(bytes.data() + layout::kHeaderCrc,
                crc32(std::span<const uint8_t>(bytes.data(), layout::kHeaderCrc)));
}

// The spec fixes the reserved bytes, the flags and the padding at zero: each
// changed, with the checksums sealed again, is refused, naming the offset.
TEST(MkFile, RefusesNonZeroReservedBytesFlagsAndPadding) {
  const std::vector<uint8_t> bytes = assemble(sampleSections());
  for (uint64_t offset = layout::kHeaderReserved; offset < layout::kHeaderCrc; ++offset) {
    std::vector<uint8_t> reserved = bytes;
    reserved[offset] = 1;
    resealHeaderAndTable(reserved);
    expectMessage(openError(reserved),
                  {"reserved header byte at offset " + std::to_string(offset), "must be 0"});
  }
  for (size_t entry = 0; entry < sampleSections().size(); ++entry) {
    uint64_t at = kMkHeaderBytes + entry * kMkSectionEntryBytes;
    std::vector<uint8_t> flags = bytes;
    flags[at + layout::kEntryFlags] = 0x80;
    resealHeaderAndTable(flags);
    expectMessage(openError(flags),
                  {"section table entry " + std::to_string(entry), "flags are 0x80, must be 0"});
    std::vector<uint8_t> reserved = bytes;
    reserved[at + layout::kEntryReserved + 3] = 1;
    resealHeaderAndTable(reserved);
    expectMessage(openError(reserved),
                  {"section table entry " + std::to_string(entry),
                   "(offset " + std::to_string(at + layout::kEntryReserved) + ")",
                   "reserved word is 0x1000000"});
  }
  // Every padding byte: between the table and the first section, between
  // sections, and before WEIGHTS' page boundary. No checksum covers them.
  std::vector<bool> inSection(bytes.size(), false);
  uint64_t tableEnd = kMkHeaderBytes + sampleSections().size() * kMkSectionEntryBytes;
  std::fill(inSection.begin(), inSection.begin() + tableEnd, true);
  std::string error;
  auto file = MkFile::view(bytes, error);
  ASSERT_NE(file, nullptr) << error;
  for (const SectionEntry &entry : file->entries())
    std::fill(inSection.begin() + entry.offset, inSection.begin() + entry.offset + entry.size,
              true);
  size_t padding = 0;
  for (uint64_t offset = 0; offset < bytes.size(); ++offset) {
    if (inSection[offset])
      continue;
    ++padding;
    std::vector<uint8_t> damaged = bytes;
    damaged[offset] = 0xff;
    std::string problem;
    EXPECT_EQ(MkFile::view(damaged, problem), nullptr) << "accepted padding at " << offset;
    expectMessage(problem,
                  {"padding byte at offset " + std::to_string(offset), "is 0xff, must be 0"});
  }
  EXPECT_GT(padding, 3000u); // WEIGHTS' page alignment alone leaves most of a page
}

TEST(MkFile, SkipsSectionsOfUnknownKinds) {
  std::vector<OwnedSection> sections = sampleSections();
  sections.push_back({static_cast<SectionKind>(77), filled(10, 9)});
  std::string error;
  std::vector<uint8_t> bytes = assemble(sections);
  auto file = MkFile::view(bytes, error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(sectionKindName(77), "kind 77");
}

TEST(MkFile, RefusesMissingFilesAndDirectories) {
  std::string error;
  EXPECT_EQ(MkFile::open(toy::temporaryPath("missing.mk"), error), nullptr);
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_EQ(MkFile::open(::testing::TempDir(), error), nullptr);
  expectMessage(error, {"it is a directory, not a regular file"});
}

// Opening a FIFO for reading blocks until a writer comes: it is refused
// from its stat() alone (a hang here is the failure).
TEST(MkFile, RefusesAFifoWithoutOpeningIt) {
  std::string path = toy::temporaryPath("fifo.mk");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::string error;
  EXPECT_EQ(MkFile::open(path, error), nullptr);
  expectMessage(error, {path, "it is a FIFO, not a regular file"});
  std::remove(path.c_str());
}

// The writer renames a temporary over its output: an output that is not a
// regular file (here a FIFO) is refused and left in place, and no temporary
// stays behind.
TEST(MkFile, WriterRefusesAnOutputThatIsNotARegularFile) {
  std::string path = toy::temporaryPath("out-fifo.mk");
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::vector<OwnedSection> owned = sampleSections();
  std::vector<SectionData> sections;
  for (const OwnedSection &section : owned)
    sections.push_back({section.kind, section.bytes});
  std::string error;
  EXPECT_FALSE(writeMkFile(path, sections, error));
  expectMessage(error, {"it is a FIFO", "name a regular file"});
  struct stat status;
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode));
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  EXPECT_NE(::stat(temporary.c_str(), &status), 0) << temporary << " was left behind";
  std::remove(path.c_str());
}

TEST(MkFile, OutputCheckRefusesTheInputAndDirectories) {
  std::string input = toy::temporaryPath("input.onnx");
  toy::writeBytes(input, {1, 2, 3});
  std::string link = toy::temporaryPath("input-link.onnx");
  std::remove(link.c_str());
  ASSERT_EQ(::link(input.c_str(), link.c_str()), 0) << std::strerror(errno);
  expectMessage(checkOutputFile(link, {input}), {"refusing to write", "it is the input"});
  expectMessage(checkOutputFile(::testing::TempDir(), {input}), {"it is a directory"});
  EXPECT_EQ(checkOutputFile(toy::temporaryPath("new.mk"), {input}), "");
  std::remove(link.c_str());
}

TEST(Crc32, MatchesZlib) {
  const char *text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const uint8_t *>(text), 9)), 0xCBF43926u);
  std::vector<uint8_t> bytes = filled(1000, 3);
  uint32_t whole = crc32(bytes);
  EXPECT_EQ(crc32(std::span(bytes).subspan(333), crc32(std::span(bytes).first(333))), whole);
}

} // namespace
} // namespace mk
