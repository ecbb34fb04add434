// A GGUF file (llama.cpp's model format, versions 2 and 3), parsed and
// checked: the header, every metadata key and value, every tensor's name,
// ggml type, dimensions and place in the data section. Values, strings and
// tensor data are seen in place in the read-only mapping, which lives as
// long as the GgufFile. Everything a span or view points at was checked to
// lie inside the file, so no accessor reads out of bounds.
#ifndef MKC_FRONTENDS_GGUF_GGUFFILE_H
#define MKC_FRONTENDS_GGUF_GGUFFILE_H

#include "core/support/MappedFile.h"
#include "frontends/gguf/GgufTypes.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mk {

constexpr uint64_t kGgufDefaultAlignment = 32;

struct GgufValue {
  GgufValueType type = GgufValueType::Uint8;
  uint64_t offset = 0; // where the value starts in the file
  // A scalar's bytes, as stored; a string's text.
  std::span<const uint8_t> scalar;
  std::string_view text;
  // An array's elements: their type, count, and for fixed-size elements
  // their bytes; strings are listed one by one.
  GgufValueType elementType = GgufValueType::Uint8;
  uint64_t count = 0;
  std::span<const uint8_t> elements;
  std::vector<std::string_view> strings;
};

struct GgufTensor {
  std::string_view name;
  uint32_t typeCode = 0;
  const GgmlTypeInfo *type = nullptr; // never null once parsed
  std::vector<uint64_t> dims;         // ggml's order: dims[0] varies fastest
  uint64_t elements = 0;
  uint64_t offset = 0; // relative to the data section
  uint64_t bytes = 0;
  std::span<const uint8_t> data;
  uint64_t infoOffset = 0; // where its tensor info starts in the file
};

class GgufFile {
public:
  // The file at `path`, mapped and checked, or nullptr with `error` set to
  // "'PATH': what is wrong, and where".
  static std::unique_ptr<GgufFile> open(const std::string &path, std::string &error);
  // The same checks on bytes the caller keeps alive (tests).
  static std::unique_ptr<GgufFile> view(std::span<const uint8_t> bytes, std::string &error);

  uint32_t version() const { return formatVersion; }
  uint64_t alignment() const { return dataAlignment; }
  uint64_t dataOffset() const { return dataStart; }
  uint64_t fileBytes() const { return bytes.size(); }

  // Metadata in file order.
  const std::vector<std::pair<std::string_view, GgufValue>> &metadata() const { return entries; }
  const GgufValue *find(std::string_view key) const;

  // Typed lookups: "" and `value` set, or an error naming the key and, when
  // it is there, its actual type ("metadata key 'K' is a string, not uint32").
  std::string uint32(std::string_view key, uint32_t &value) const;
  std::string float32(std::string_view key, float &value) const;
  std::string string(std::string_view key, std::string_view &value) const;
  std::string stringArray(std::string_view key, std::vector<std::string_view> &values) const;
  // The element count of the array under `key`.
  std::string arrayLength(std::string_view key, uint64_t &count) const;

  // Tensors in file order.
  const std::vector<GgufTensor> &tensors() const { return tensorList; }
  const GgufTensor *findTensor(std::string_view name) const;

  // Lets the pages of `range` (tensor data of this file) go once read, when
  // the file is mapped (MappedFile::releasePages); nothing for a view.
  void releasePages(std::span<const uint8_t> range) const {
    if (mapping)
      mapping->releasePages(range);
  }

private:
  GgufFile() = default;
  std::string parse();
  std::string parseHeader(class GgufCursor &cursor, uint64_t &tensorCount, uint64_t &keyCount);
  std::string parseMetadata(class GgufCursor &cursor, uint64_t keyCount);
  std::string parseTensorInfos(class GgufCursor &cursor, uint64_t tensorCount);
  std::string readAlignment();
  std::string placeTensors(uint64_t infosEnd);
  std::string typed(std::string_view key, GgufValueType expected, const GgufValue *&value) const;

  std::unique_ptr<MappedFile> mapping;
  std::span<const uint8_t> bytes;
  uint32_t formatVersion = 0;
  uint64_t dataAlignment = kGgufDefaultAlignment;
  uint64_t dataStart = 0;
  std::vector<std::pair<std::string_view, GgufValue>> entries;
  std::map<std::string_view, size_t> entryIndex;
  std::vector<GgufTensor> tensorList;
  std::map<std::string_view, size_t> tensorIndex;
};

// Whether `path` starts with GGUF's magic, or is named *.gguf (so that a
// damaged one is still read as GGUF, and the reader says what is wrong).
bool looksLikeGguf(const std::string &path);

} // namespace mk

#endif
