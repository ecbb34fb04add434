#include "frontends/onnx/LazyValues.h"

#include "core/support/RegularFile.h"
#include "frontends/onnx/OnnxLoader.h"

#include "onnx.pb.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace mk::onnx_import {

namespace {

int64_t elementBytes(int dataType) {
  using TP = onnx::TensorProto;
  switch (dataType) {
  case TP::DOUBLE:
    return 8;
  case TP::FLOAT16:
  case TP::BFLOAT16:
    return 2;
  default:
    return 4;
  }
}

class ExternalValues final : public WeightValues {
public:
  ExternalValues(std::string path, uint64_t offset, uint64_t count, int dataType, std::string what)
      : path(std::move(path)), offset(offset), count(count), dataType(dataType),
        what(std::move(what)) {}
  ~ExternalValues() override { release(); }

  void read(uint64_t begin, uint64_t n, float *out) const override {
    const char *data = map();
    using TP = onnx::TensorProto;
    // The common types in loops of their own, which the compiler vectorizes.
    if (dataType == TP::BFLOAT16) {
      const char *from = data + begin * 2;
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t bits;
        std::memcpy(&bits, from + 2 * i, 2);
        uint32_t wide = static_cast<uint32_t>(bits) << 16;
        std::memcpy(out + i, &wide, 4);
      }
    } else if (dataType == TP::FLOAT) {
      std::memcpy(out, data + begin * 4, n * 4);
    } else {
      for (uint64_t i = 0; i < n; ++i)
        out[i] = rawFloatElement(data, static_cast<int64_t>(begin + i), dataType);
    }
  }

  void release() const override {
    if (base)
      ::munmap(base, mappedBytes);
    base = nullptr;
    mappedBytes = 0;
  }

  std::string identity() const override {
    return path + ":" + std::to_string(offset) + ":" + std::to_string(dataType);
  }

private:
  // The tensor's bytes, mapped from the page that holds the first of them.
  const char *map() const {
    if (base)
      return static_cast<const char *>(base) + (offset % pageSize());
    std::string error;
    int fd = openRegularFile(path, "the external data file of " + what, error);
    if (fd < 0)
      throw std::runtime_error(error);
    uint64_t bytes = count * static_cast<uint64_t>(elementBytes(dataType));
    struct stat status;
    // Checked when the model was read; checked again, since touching a page
    // past the end of a file that has shrunk since would be a SIGBUS.
    if (::fstat(fd, &status) != 0 || static_cast<uint64_t>(status.st_size) < offset ||
        static_cast<uint64_t>(status.st_size) - offset < bytes) {
      ::close(fd);
      throw std::runtime_error(what + ": external data file '" + path +
                               "' no longer holds its bytes [" + std::to_string(offset) + ", +" +
                               std::to_string(bytes) + ")");
    }
    uint64_t start = offset / pageSize() * pageSize();
    mappedBytes = bytes + (offset - start);
    void *mapped = ::mmap(nullptr, mappedBytes, PROT_READ, MAP_PRIVATE, fd,
                          static_cast<off_t>(start));
    int mapError = errno;
    ::close(fd);
    if (mapped == MAP_FAILED) {
      mappedBytes = 0;
      throw std::runtime_error("cannot map the external data of " + what + " from '" + path +
                               "': " + std::strerror(mapError));
    }
    // No MADV_WILLNEED: it would make the whole range resident at the first
    // read (the importer's sample of a few pages), long before it is written.
    base = mapped;
    return static_cast<const char *>(base) + (offset - start);
  }

  static uint64_t pageSize() {
    static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    return size;
  }

  std::string path;
  uint64_t offset, count;
  int dataType;
  std::string what;
  mutable void *base = nullptr;
  mutable uint64_t mappedBytes = 0;
};

} // namespace

std::shared_ptr<const WeightValues> externalValues(std::string path, uint64_t offset,
                                                   uint64_t count, int dataType,
                                                   std::string what) {
  return std::make_shared<ExternalValues>(std::move(path), offset, count, dataType,
                                          std::move(what));
}

} // namespace mk::onnx_import
