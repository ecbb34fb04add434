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

MappedFile::~MappedFile() {
  if (base)
    munmap(base, size);
}

} // namespace mk
