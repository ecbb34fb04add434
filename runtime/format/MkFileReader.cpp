// The reading half of MkFile.h. The file may be truncated, corrupted or
// hostile: every offset is checked against the file's size (without
// overflow) before anything is read there, and every section's checksum
// before it is handed out.
#include "runtime/format/Crc32.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/MkFileLayout.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

namespace mk {

static_assert(std::endian::native == std::endian::little,
              "the weights and the schedule blob are little-endian, used in place");

namespace {

// More sections than any version-1 file has kinds, with room for new kinds.
constexpr uint32_t kMaxSections = 64;

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string where(const SectionEntry &entry) {
  return "section " + sectionKindName(entry.kind) + " (bytes [" + std::to_string(entry.offset) +
         ", " + std::to_string(entry.offset + entry.size) + "))";
}

// "" when the header is sound; the file may still be shorter than it says.
std::string checkHeader(std::span<const uint8_t> bytes) {
  if (bytes.empty())
    return "truncated file: it is empty";
  size_t magicBytes = std::min(bytes.size(), sizeof kMkMagic);
  if (std::memcmp(bytes.data(), kMkMagic, magicBytes) != 0)
    return "not a .mk file: bad magic at offset 0 (expected \"MKC\\0ARTF\")";
  if (bytes.size() < kMkHeaderBytes)
    return "truncated file: " + std::to_string(bytes.size()) + " bytes, the header alone needs " +
           std::to_string(kMkHeaderBytes);
  const uint8_t *header = bytes.data();
  uint32_t version = layout::get32(header + layout::kVersion);
  if (version != kMkFormatVersion)
    return "unsupported format version " + std::to_string(version) + " at offset " +
           std::to_string(layout::kVersion) + " (this reader supports version " +
           std::to_string(kMkFormatVersion) + ")";
  uint32_t stored = layout::get32(header + layout::kHeaderCrc);
  uint32_t computed = crc32(bytes.subspan(0, layout::kHeaderCrc));
  if (stored != computed)
    return "checksum mismatch in the header (bytes [0, " + std::to_string(kMkHeaderBytes) +
           ")): stored " + hex(stored) + ", computed " + hex(computed);
  if (layout::get32(header + layout::kHeaderBytes) != kMkHeaderBytes ||
      layout::get32(header + layout::kEntryBytes) != kMkSectionEntryBytes)
    return "the header declares a header or section-entry size other than " +
           std::to_string(kMkHeaderBytes) + " and " + std::to_string(kMkSectionEntryBytes);
  // Reserved bytes are zero, so that a later version can give them a meaning
  // that an older reader does not silently ignore.
  for (uint64_t i = layout::kHeaderReserved; i < layout::kHeaderCrc; ++i)
    if (header[i] != 0)
      return "reserved header byte at offset " + std::to_string(i) + " is " + hex(header[i]) +
             ", must be 0";
  return "";
}

// Reads the table (in bounds of the declared size) into `table`.
std::string readTable(std::span<const uint8_t> bytes, uint64_t declaredBytes,
                      std::vector<SectionEntry> &table) {
  const uint8_t *header = bytes.data();
  uint64_t tableOffset = layout::get64(header + layout::kTableOffset);
  uint32_t count = layout::get32(header + layout::kSectionCount);
  if (count > kMaxSections)
    return "the header declares " + std::to_string(count) + " sections, more than " +
           std::to_string(kMaxSections);
  uint64_t tableBytes = uint64_t(count) * kMkSectionEntryBytes;
  if (tableOffset < kMkHeaderBytes || tableOffset > declaredBytes ||
      tableBytes > declaredBytes - tableOffset)
    return "the section table (offset " + std::to_string(tableOffset) + ", " +
           std::to_string(count) + " entries) lies outside the file's " +
           std::to_string(declaredBytes) + " bytes";
  if (tableOffset + tableBytes > bytes.size())
    return "truncated file: " + std::to_string(bytes.size()) +
           " bytes, the section table ends at " + std::to_string(tableOffset + tableBytes);
  std::span<const uint8_t> raw = bytes.subspan(tableOffset, tableBytes);
  uint32_t stored = layout::get32(header + layout::kTableCrc), computed = crc32(raw);
  if (stored != computed)
    return "checksum mismatch in the section table (offset " + std::to_string(tableOffset) +
           "): stored " + hex(stored) + ", computed " + hex(computed);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t *entry = raw.data() + i * kMkSectionEntryBytes;
    uint64_t entryOffset = tableOffset + uint64_t(i) * kMkSectionEntryBytes;
    if (uint32_t flags = layout::get32(entry + layout::kEntryFlags); flags != 0)
      return "section table entry " + std::to_string(i) + " (offset " +
             std::to_string(entryOffset) + "): flags are " + hex(flags) + ", must be 0";
    if (uint32_t reserved = layout::get32(entry + layout::kEntryReserved); reserved != 0)
      return "section table entry " + std::to_string(i) + " (offset " +
             std::to_string(entryOffset + layout::kEntryReserved) + "): reserved word is " +
             hex(reserved) + ", must be 0";
    table.push_back(
        {layout::get32(entry + layout::kEntryKind), layout::get64(entry + layout::kEntryOffset),
         layout::get64(entry + layout::kEntrySize), layout::get32(entry + layout::kEntryCrc)});
  }
  return "";
}

// Bounds, alignment, overlaps and duplicates, against the declared size.
std::string checkPlacement(const std::vector<SectionEntry> &table, uint64_t tableEnd,
                           uint64_t declaredBytes) {
  for (size_t i = 0; i < table.size(); ++i) {
    const SectionEntry &entry = table[i];
    if (entry.offset > declaredBytes || entry.size > declaredBytes - entry.offset ||
        entry.offset < tableEnd)
      return "section " + sectionKindName(entry.kind) + " (table entry " + std::to_string(i) +
             ", offset " + std::to_string(entry.offset) + ", size " + std::to_string(entry.size) +
             ") is out of bounds: sections lie in [" + std::to_string(tableEnd) + ", " +
             std::to_string(declaredBytes) + ")";
    uint64_t alignment = entry.kind == static_cast<uint32_t>(SectionKind::Weights)
                             ? kMkWeightsAlignment
                             : kMkSectionAlignment;
    if (entry.offset % alignment != 0)
      return where(entry) + " is not aligned to " + std::to_string(alignment) + " bytes";
    for (size_t j = 0; j < i; ++j) {
      if (table[j].kind == entry.kind)
        return "section " + sectionKindName(entry.kind) + " appears twice (table entries " +
               std::to_string(j) + " and " + std::to_string(i) + ")";
      bool overlap = entry.size > 0 && table[j].size > 0 &&
                     entry.offset < table[j].offset + table[j].size &&
                     table[j].offset < entry.offset + entry.size;
      if (overlap)
        return where(entry) + " overlaps " + where(table[j]);
    }
  }
  return "";
}

// The bytes no section holds, from the end of the table to the end of the
// file, are zero: nothing can hide between sections.
std::string checkPadding(std::span<const uint8_t> bytes, const std::vector<SectionEntry> &table,
                         uint64_t tableEnd) {
  std::vector<SectionEntry> byOffset;
  for (const SectionEntry &entry : table)
    if (entry.size > 0)
      byOffset.push_back(entry);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const SectionEntry &a, const SectionEntry &b) { return a.offset < b.offset; });
  uint64_t cursor = tableEnd;
  auto zeroUpTo = [&](uint64_t end) -> std::string {
    for (uint64_t i = cursor; i < end; ++i)
      if (bytes[i] != 0)
        return "padding byte at offset " + std::to_string(i) + " (between sections, bytes [" +
               std::to_string(cursor) + ", " + std::to_string(end) + ")) is " + hex(bytes[i]) +
               ", must be 0";
    return "";
  };
  for (const SectionEntry &entry : byOffset) {
    if (std::string problem = zeroUpTo(entry.offset); !problem.empty())
      return problem;
    cursor = std::max(cursor, entry.offset + entry.size);
  }
  return zeroUpTo(bytes.size());
}

// `mapping`, when the bytes are a mapped file, lets each piece's pages go
// once its checksum is taken (and `visitor` has seen it).
std::string checkFile(std::span<const uint8_t> bytes, std::vector<SectionEntry> &table,
                      const MappedFile *mapping, const SectionPieceVisitor &visitor = {}) {
  if (std::string problem = checkHeader(bytes); !problem.empty())
    return problem;
  uint64_t declaredBytes = layout::get64(bytes.data() + layout::kFileBytes);
  if (std::string problem = readTable(bytes, declaredBytes, table); !problem.empty())
    return problem;
  uint64_t tableEnd =
      layout::get64(bytes.data() + layout::kTableOffset) + table.size() * kMkSectionEntryBytes;
  if (std::string problem = checkPlacement(table, tableEnd, declaredBytes); !problem.empty())
    return problem;

  if (bytes.size() < declaredBytes) {
    std::string message = "truncated file: " + std::to_string(bytes.size()) +
                          " bytes, the header declares " + std::to_string(declaredBytes);
    for (const SectionEntry &entry : table)
      if (entry.offset + entry.size > bytes.size())
        return message + "; " + where(entry) + " ends past the end of the file";
    return message;
  }
  if (bytes.size() > declaredBytes)
    return "the file has " + std::to_string(bytes.size()) + " bytes, the header declares " +
           std::to_string(declaredBytes) + ": trailing bytes from offset " +
           std::to_string(declaredBytes);

  for (SectionKind kind : kRequiredSections)
    if (std::none_of(table.begin(), table.end(), [&](const SectionEntry &entry) {
          return entry.kind == static_cast<uint32_t>(kind);
        }))
      return "missing required section " + sectionKindName(kind);
  if (std::string problem = checkPadding(bytes, table, tableEnd); !problem.empty())
    return problem;
  for (const SectionEntry &entry : table) {
    // Pages go 64 MiB at a time; the visitor sees a MiB at a time, each
    // right after its checksum, while it is still in the cache.
    constexpr uint64_t kRelease = uint64_t{64} << 20, kVisit = uint64_t{1} << 20;
    uint32_t computed = 0;
    for (uint64_t done = 0; done < entry.size; done += kRelease) {
      std::span<const uint8_t> piece =
          bytes.subspan(entry.offset + done, std::min(kRelease, entry.size - done));
      for (uint64_t seen = 0; seen < piece.size(); seen += kVisit) {
        std::span<const uint8_t> part = piece.subspan(seen, std::min(kVisit, piece.size() - seen));
        computed = crc32(part, computed);
        if (visitor)
          visitor(static_cast<SectionKind>(entry.kind), done + seen, part);
      }
      if (mapping)
        mapping->releasePages(piece);
    }
    if (computed != entry.crc32)
      return "checksum mismatch in " + where(entry) + ": stored " + hex(entry.crc32) +
             ", computed " + hex(computed);
  }
  return "";
}

} // namespace

std::string sectionKindName(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
  case SectionKind::Manifest:
    return "MANIFEST";
  case SectionKind::Cubin:
    return "CUBIN";
  case SectionKind::Ptx:
    return "PTX";
  case SectionKind::Schedule:
    return "SCHEDULE";
  case SectionKind::Weights:
    return "WEIGHTS";
  case SectionKind::TaskGraph:
    return "TASKGRAPH";
  case SectionKind::Tokenizer:
    return "TOKENIZER";
  case SectionKind::RowSteps:
    return "ROWSTEPS";
  case SectionKind::Ranks:
    return "RANKS";
  case SectionKind::RowKernels:
    return "ROWKERNELS";
  case SectionKind::RankKernel:
    return "RANKKERNEL";
  }
  return "kind " + std::to_string(kind);
}

std::unique_ptr<MkFile> MkFile::view(std::span<const uint8_t> bytes, std::string &error) {
  std::unique_ptr<MkFile> file(new MkFile());
  file->bytes = bytes;
  error = checkFile(bytes, file->table, nullptr);
  if (!error.empty())
    return nullptr;
  return file;
}

std::unique_ptr<MkFile> MkFile::open(const std::string &path, std::string &error,
                                     const SectionPieceVisitor &visitor) {
  std::unique_ptr<MappedFile> mapping = MappedFile::open(path, error);
  if (!mapping)
    return nullptr;
  std::unique_ptr<MkFile> file(new MkFile());
  file->bytes = mapping->bytes();
  file->mapping = std::move(mapping);
  std::string problem = checkFile(file->bytes, file->table, file->mapping.get(), visitor);
  if (!problem.empty()) {
    error = "'" + path + "': " + problem;
    return nullptr;
  }
  return file;
}

MkFile::~MkFile() = default;

std::span<const uint8_t> MkFile::section(SectionKind kind) const {
  for (const SectionEntry &entry : table)
    if (entry.kind == static_cast<uint32_t>(kind))
      return bytes.subspan(entry.offset, entry.size);
  return {};
}

} // namespace mk
