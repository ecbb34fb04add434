// The .mk container: a versioned header, a table of sections (kind, offset,
// size, CRC-32) and the sections' bytes. It knows nothing of what the
// sections hold (ArtifactFile.h puts the model in them); it only guarantees
// that what it hands out is in bounds, aligned, and has the bytes that were
// written. docs/mk-format.md specifies the layout.
//
// Reading maps the file and checks everything before returning a section:
// every error names what is wrong and where (the section, its offset).
#ifndef MKC_RUNTIME_FORMAT_MKFILE_H
#define MKC_RUNTIME_FORMAT_MKFILE_H

#include "core/support/MappedFile.h"
#include "core/support/RegularFile.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace mk {

constexpr uint8_t kMkMagic[8] = {'M', 'K', 'C', '\0', 'A', 'R', 'T', 'F'};
constexpr uint32_t kMkFormatVersion = 10;
constexpr uint64_t kMkHeaderBytes = 64;
constexpr uint64_t kMkSectionEntryBytes = 32;
constexpr uint64_t kMkSectionAlignment = 64;
// So that the weights can be mapped straight from the file and copied to the
// GPU by pages.
constexpr uint64_t kMkWeightsAlignment = 4096;

enum class SectionKind : uint32_t {
  Manifest = 1,  // protobuf mk.format.Manifest (manifest.proto)
  Cubin = 2,     // the megakernel for the target; empty without one
  Ptx = 3,       // its PTX; empty without one
  Schedule = 4,  // the schedule blob (ScheduleBlob.h)
  Weights = 5,   // bf16 weights, indexed by the manifest
  TaskGraph = 6, // the task graph and schedule (TaskGraphCodec.h)
  Tokenizer = 7, // optional: the model's tokenizer.json, byte for byte (HF tokenizers)
  RowSteps = 8,  // optional: the steps of several rows, each a TASKGRAPH encoding
  Ranks = 9,     // optional: tensor parallel, every rank's graph and the weight slices they name
  RowKernels = 10, // optional: the megakernel of each ROWSTEPS step (empty: none)
  RankKernel = 11, // optional: the megakernel every rank of RANKS runs (RankKernel.h)
};

// Every kind above; a version-1 file holds each exactly once.
constexpr SectionKind kRequiredSections[] = {SectionKind::Manifest, SectionKind::Cubin,
                                             SectionKind::Ptx,      SectionKind::Schedule,
                                             SectionKind::Weights,  SectionKind::TaskGraph};

// "MANIFEST", ..., or "kind 9" for one this reader does not know.
std::string sectionKindName(uint32_t kind);
inline std::string sectionKindName(SectionKind kind) {
  return sectionKindName(static_cast<uint32_t>(kind));
}

struct SectionData {
  SectionKind kind;
  std::span<const uint8_t> bytes;
};

struct SectionEntry {
  uint32_t kind = 0;
  uint64_t offset = 0, size = 0;
  uint32_t crc32 = 0;
};

// "" when a command reading `inputs` may write `output`, else why not,
// naming the path. Refused: an output that is one of the inputs (the same
// file, compared by device and inode, so that another spelling or a hard
// link does not overwrite the source), and one that exists as a directory,
// a block device or a socket. FIFOs and character devices (/dev/stdout) may
// be written in place; writeMkFile refuses them (see there).
std::string checkOutputFile(const std::string &output, const std::vector<std::string> &inputs);

// Writes the sections, in the order given, with the header and table. The
// stream must be binary. Returns false with `error` set when the stream fails.
bool writeMkFile(std::ostream &os, std::span<const SectionData> sections, std::string &error);
// To a temporary file beside `path`, renamed to `path` once complete. An
// existing `path` that is not a regular file is refused: renaming over
// /dev/null (as root) would replace the device for the whole machine.
bool writeMkFile(const std::string &path, std::span<const SectionData> sections,
                 std::string &error);

// A section written as it is produced rather than held (the weights of a big
// model): `produce` hands exactly `size` bytes, in order, to the sink it is
// given, and returns false with its error set when it cannot.
struct StreamedSection {
  using Sink = std::function<bool(std::span<const uint8_t>)>;
  SectionKind kind;
  uint64_t size = 0;
  std::function<bool(const Sink &sink, std::string &error)> produce;
};

// writeMkFile(path, sections) with `last` after them, written as it is
// produced: its checksum is computed on the way, and the header and table,
// which hold it, are written last at the start of the file. The bytes are
// those writeMkFile would write for the same sections held in memory.
bool writeMkFile(const std::string &path, std::span<const SectionData> sections,
                 const StreamedSection &last, std::string &error);

// Shown each piece of every section as its checksum is taken, in order
// (`offset` from the section's start), before its pages go: a reader that
// must look at every byte of a big section (the loader's finite check of
// WEIGHTS) does so on that one pass through the file, not on another. A
// piece is at most a MiB, so it is still in the cache when shown.
using SectionPieceVisitor =
    std::function<void(SectionKind kind, uint64_t offset, std::span<const uint8_t> piece)>;

class MkFile {
public:
  // Maps `path` read-only and checks it; nullptr with `error` set otherwise
  // (a directory, FIFO or device is refused without being opened).
  static std::unique_ptr<MkFile> open(const std::string &path, std::string &error,
                                      const SectionPieceVisitor &visitor = {});
  // Checks a file already in memory; `bytes` must outlive the MkFile.
  static std::unique_ptr<MkFile> view(std::span<const uint8_t> bytes, std::string &error);
  ~MkFile();
  MkFile(const MkFile &) = delete;
  MkFile &operator=(const MkFile &) = delete;

  // The bytes of a section every valid file has (kRequiredSections).
  std::span<const uint8_t> section(SectionKind kind) const;
  const std::vector<SectionEntry> &entries() const { return table; }
  // Lets the pages of `range` (bytes of this file) go once read, when the
  // file is mapped (MappedFile::releasePages); nothing for a view.
  void releasePages(std::span<const uint8_t> range) const {
    if (mapping)
      mapping->releasePages(range);
  }
  uint64_t size() const { return bytes.size(); }

private:
  MkFile() = default;

  std::unique_ptr<MappedFile> mapping; // null for a view of bytes held elsewhere
  std::span<const uint8_t> bytes;
  std::vector<SectionEntry> table;
};

} // namespace mk

#endif
