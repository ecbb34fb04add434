// The writing half of MkFile.h: lays the sections out after the header and
// table, each on its alignment, computes the checksums, and streams it all.
#include "runtime/format/Crc32.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/MkFileLayout.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

namespace mk {

namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint64_t alignmentOf(SectionKind kind) {
  return kind == SectionKind::Weights ? kMkWeightsAlignment : kMkSectionAlignment;
}

std::vector<uint8_t> encodeTable(std::span<const SectionEntry> entries) {
  std::vector<uint8_t> table(entries.size() * kMkSectionEntryBytes, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    uint8_t *entry = table.data() + i * kMkSectionEntryBytes;
    layout::put32(entry + layout::kEntryKind, entries[i].kind);
    layout::put32(entry + layout::kEntryFlags, 0);
    layout::put64(entry + layout::kEntryOffset, entries[i].offset);
    layout::put64(entry + layout::kEntrySize, entries[i].size);
    layout::put32(entry + layout::kEntryCrc, entries[i].crc32);
  }
  return table;
}

std::vector<uint8_t> encodeHeader(uint64_t fileBytes, uint32_t sectionCount, uint32_t tableCrc) {
  std::vector<uint8_t> header(kMkHeaderBytes, 0);
  std::memcpy(header.data() + layout::kMagic, kMkMagic, sizeof kMkMagic);
  layout::put32(header.data() + layout::kVersion, kMkFormatVersion);
  layout::put32(header.data() + layout::kHeaderBytes, kMkHeaderBytes);
  layout::put64(header.data() + layout::kFileBytes, fileBytes);
  layout::put64(header.data() + layout::kTableOffset, kMkHeaderBytes);
  layout::put32(header.data() + layout::kSectionCount, sectionCount);
  layout::put32(header.data() + layout::kEntryBytes, kMkSectionEntryBytes);
  layout::put32(header.data() + layout::kTableCrc, tableCrc);
  layout::put32(header.data() + layout::kHeaderCrc,
                crc32(std::span<const uint8_t>(header.data(), layout::kHeaderCrc)));
  return header;
}

void writeZeros(std::ostream &os, uint64_t count) {
  static const char zeros[4096] = {};
  while (count > 0) {
    uint64_t n = std::min<uint64_t>(count, sizeof zeros);
    os.write(zeros, static_cast<std::streamsize>(n));
    count -= n;
  }
}

// Each section's place in the file, in the order given: the next offset on
// its alignment after the previous section's end.
std::vector<SectionEntry> layOut(std::span<const SectionKind> kinds,
                                 std::span<const uint64_t> sizes, uint64_t &fileBytes) {
  std::vector<SectionEntry> entries;
  uint64_t end = kMkHeaderBytes + kinds.size() * kMkSectionEntryBytes;
  for (size_t i = 0; i < kinds.size(); ++i) {
    uint64_t offset = alignUp(end, alignmentOf(kinds[i]));
    entries.push_back({static_cast<uint32_t>(kinds[i]), offset, sizes[i], 0});
    end = offset + sizes[i];
  }
  fileBytes = end;
  return entries;
}

void writeHeaderAndTable(std::ostream &os, std::span<const SectionEntry> entries,
                         uint64_t fileBytes) {
  std::vector<uint8_t> table = encodeTable(entries);
  std::vector<uint8_t> header =
      encodeHeader(fileBytes, static_cast<uint32_t>(entries.size()), crc32(table));
  os.write(reinterpret_cast<const char *>(header.data()), header.size());
  os.write(reinterpret_cast<const char *>(table.data()), table.size());
}

// The in-memory sections after the header and table, each after the zeros
// that bring it to its offset. Returns the offset reached.
uint64_t writeSections(std::ostream &os, std::span<const SectionData> sections,
                       std::span<const SectionEntry> entries) {
  uint64_t written = kMkHeaderBytes + entries.size() * kMkSectionEntryBytes;
  for (size_t i = 0; i < sections.size(); ++i) {
    writeZeros(os, entries[i].offset - written);
    os.write(reinterpret_cast<const char *>(sections[i].bytes.data()),
             static_cast<std::streamsize>(sections[i].bytes.size()));
    written = entries[i].offset + entries[i].size;
  }
  return written;
}

// The sections, then `last` as it is produced, then the header and table
// over the zeros that held their place.
bool writeStreamed(std::ofstream &os, std::span<const SectionData> sections,
                   const StreamedSection &last, std::string &error) {
  std::vector<SectionKind> kinds;
  std::vector<uint64_t> sizes;
  for (const SectionData &section : sections) {
    kinds.push_back(section.kind);
    sizes.push_back(section.bytes.size());
  }
  kinds.push_back(last.kind);
  sizes.push_back(last.size);
  uint64_t fileBytes = 0;
  std::vector<SectionEntry> entries = layOut(kinds, sizes, fileBytes);
  for (size_t i = 0; i < sections.size(); ++i)
    entries[i].crc32 = crc32(sections[i].bytes);

  writeZeros(os, kMkHeaderBytes + entries.size() * kMkSectionEntryBytes);
  uint64_t written = writeSections(os, sections, entries);
  SectionEntry &streamed = entries.back();
  writeZeros(os, streamed.offset - written);
  uint64_t produced = 0;
  uint32_t crc = 0;
  auto sink = [&](std::span<const uint8_t> bytes) {
    if (bytes.size() > last.size - produced) {
      error = "the " + sectionKindName(last.kind) + " section grew past its " +
              std::to_string(last.size) + " bytes";
      return false;
    }
    crc = crc32(bytes, crc);
    os.write(reinterpret_cast<const char *>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
    produced += bytes.size();
    return static_cast<bool>(os);
  };
  if (!last.produce(sink, error))
    return false;
  if (produced != last.size) {
    error = "the " + sectionKindName(last.kind) + " section has " + std::to_string(produced) +
            " of its " + std::to_string(last.size) + " bytes";
    return false;
  }
  streamed.crc32 = crc;
  os.seekp(0);
  writeHeaderAndTable(os, entries, fileBytes);
  os.flush();
  if (!os) {
    error = "writing the .mk file failed";
    return false;
  }
  return true;
}

// Writes a file to a temporary beside `path` with `write`, renamed to `path`
// once complete (see writeMkFile).
bool writeFileInPlace(const std::string &path,
                      const std::function<bool(std::ofstream &, std::string &)> &write,
                      std::string &error) {
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    error = "it is " + fileKindName(existing.st_mode) +
            ", and a .mk file is renamed into place over its output, replacing it: name a "
            "regular file";
    return false;
  }
  // A reader never sees a half-written model under the final name.
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) {
      error = "cannot open '" + temporary + "' for writing: " + std::strerror(errno);
      return false;
    }
    if (!write(file, error)) {
      // A failed stream is the file's fault (a full disk); otherwise what
      // was being written refused itself (a weight that rounds to infinity).
      if (!file)
        error = "'" + temporary + "': " + error + ": " + std::strerror(errno);
      std::remove(temporary.c_str());
      return false;
    }
  }
  // Again, since writing a big model takes a while.
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    error = "it is now " + fileKindName(existing.st_mode) + ", and renaming '" + temporary +
            "' over it would replace it";
    std::remove(temporary.c_str());
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + temporary + "' to '" + path + "': " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

} // namespace

bool writeMkFile(std::ostream &os, std::span<const SectionData> sections, std::string &error) {
  std::vector<SectionKind> kinds;
  std::vector<uint64_t> sizes;
  for (const SectionData &section : sections) {
    kinds.push_back(section.kind);
    sizes.push_back(section.bytes.size());
  }
  uint64_t fileBytes = 0;
  std::vector<SectionEntry> entries = layOut(kinds, sizes, fileBytes);
  for (size_t i = 0; i < sections.size(); ++i)
    entries[i].crc32 = crc32(sections[i].bytes);
  writeHeaderAndTable(os, entries, fileBytes);
  writeSections(os, sections, entries);
  os.flush();
  if (!os) {
    error = "writing the .mk file failed";
    return false;
  }
  return true;
}

std::string checkOutputFile(const std::string &output, const std::vector<std::string> &inputs) {
  struct stat written;
  if (::stat(output.c_str(), &written) != 0)
    return ""; // a new file; whether its folder takes it shows when it is written
  for (const std::string &input : inputs) {
    struct stat read;
    if (::stat(input.c_str(), &read) == 0 && read.st_dev == written.st_dev &&
        read.st_ino == written.st_ino)
      return "refusing to write '" + output + "': it is the input '" + input + "'";
  }
  if (S_ISDIR(written.st_mode) || S_ISBLK(written.st_mode) || S_ISSOCK(written.st_mode))
    return "cannot write '" + output + "': it is " + fileKindName(written.st_mode);
  return "";
}

bool writeMkFile(const std::string &path, std::span<const SectionData> sections,
                 std::string &error) {
  return writeFileInPlace(
      path,
      [&](std::ofstream &file, std::string &writeError) {
        return writeMkFile(file, sections, writeError);
      },
      error);
}

bool writeMkFile(const std::string &path, std::span<const SectionData> sections,
                 const StreamedSection &last, std::string &error) {
  return writeFileInPlace(
      path,
      [&](std::ofstream &file, std::string &writeError) {
        return writeStreamed(file, sections, last, writeError);
      },
      error);
}

} // namespace mk
