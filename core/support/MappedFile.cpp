#include "core/support/MappedFile.h"

#include "core/support/RegularFile.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mk {

std::unique_ptr<MappedFile> MappedFile::open(const std::string &path, std::string &error) {
  int fd = openRegularFile(path, "", error);
  if (fd < 0)
    return nullptr;
  struct stat status;
  if (fstat(fd, &status) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<MappedFile> mapping(new MappedFile());
  mapping->size = static_cast<size_t>(status.st_size);
  // An empty file cannot be mapped; it is an empty span, refused by the reader.
  if (mapping->size > 0) {
    void *base = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      error = "cannot map '" + path + "': " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    mapping->base = base;
  }
  ::close(fd);
  return mapping;
}

void MappedFile::releasePages(std::span<const uint8_t> range) const {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(range.data());
  uintptr_t end = begin + range.size();
  uintptr_t mappedBegin = reinterpret_cast<uintptr_t>(base);
  if (range.empty() || begin < mappedBegin || end > mappedBegin + size)
    return;
  begin = (begin + page - 1) / page * page;
  end = end / page * page;
  // Of a read-only private mapping of a file nothing is lost: the pages
  // are the file's, and are read again from it when touched.
  if (begin < end)
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (base)
    munmap(base, size);
}

} // namespace mk
