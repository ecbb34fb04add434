// A file mapped read-only into memory: a GGUF file holds gigabytes of
// weights, which are seen in place rather than copied.
#ifndef MKC_FRONTENDS_GGUF_GGUFMAPPING_H
#define MKC_FRONTENDS_GGUF_GGUFMAPPING_H

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace mk {

class GgufMapping {
public:
  // The regular file `path` mapped, or nullptr with `error` set
  // ("cannot open 'PATH': why", "cannot map 'PATH': why").
  static std::unique_ptr<GgufMapping> open(const std::string &path, std::string &error);
  ~GgufMapping();
  GgufMapping(const GgufMapping &) = delete;
  GgufMapping &operator=(const GgufMapping &) = delete;

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t *>(base), size}; }

private:
  GgufMapping() = default;
  void *base = nullptr;
  size_t size = 0;
};

} // namespace mk

#endif
