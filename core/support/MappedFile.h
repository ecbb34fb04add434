// A file mapped read-only into memory: .mk and GGUF files hold gigabytes of
// weights, which are seen in place rather than copied.
#ifndef MKC_CORE_SUPPORT_MAPPEDFILE_H
#define MKC_CORE_SUPPORT_MAPPEDFILE_H

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mk {

class MappedFile {
public:
  // The regular file `path` mapped, or nullptr with `error` set
  // ("cannot open 'PATH': why", "cannot map 'PATH': why").
  static std::unique_ptr<MappedFile> open(const std::string &path, std::string &error);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t *>(base), size}; }
  // Lets the whole pages of `range` (a part of bytes()) go from this
  // process's memory once read: the file stays in the page cache and a later
  // read maps them again. How a reader checks or copies a 16 GB file without
  // holding 16 GB resident.
  void releasePages(std::span<const uint8_t> range) const;

private:
  MappedFile() = default;
  void *base = nullptr;
  size_t size = 0;
};

} // namespace mk

#endif
