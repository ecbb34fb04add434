// The header and the metadata of a GGUF file, and the typed lookups; the
// tensor infos and the data section are GgufTensorInfos.cpp's.
#include "frontends/gguf/GgufFile.h"

#include "frontends/gguf/GgufCursor.h"

#include <fstream>

namespace mk {

namespace {

constexpr char kGgufMagic[4] = {'G', 'G', 'U', 'F'};

// The smallest metadata entry: an empty key's length, the type, a uint8.
constexpr uint64_t kSmallestEntryBytes = 8 + 4 + 1;
// The smallest tensor info: an empty name's length, n_dims, one dim, type, offset.
constexpr uint64_t kSmallestTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

std::string quotedKey(std::string_view key) { return "'" + std::string(key) + "'"; }

std::string readArray(GgufCursor &cursor, GgufValue &value, const std::string &what) {
  uint64_t start = cursor.offset();
  uint32_t code = 0;
  if (std::string error = cursor.read(code, "the element type of " + what); !error.empty())
    return error;
  std::optional<GgufValueType> elementType = ggufValueType(code);
  if (!elementType)
    return "unknown array element type " + std::to_string(code) + " at offset " +
           std::to_string(start) + " (" + what + ")";
  if (*elementType == GgufValueType::Array)
    return "arrays of arrays are not supported (" + what + ", at offset " +
           std::to_string(start) + ")";
  value.elementType = *elementType;
  if (std::string error = cursor.read(value.count, "the element count of " + what);
      !error.empty())
    return error;
  // Every element takes at least this much, so a count the rest of the file
  // cannot hold is refused before anything is reserved for it.
  uint32_t smallest = *elementType == GgufValueType::String ? 8 : ggufValueBytes(*elementType);
  if (value.count > cursor.remaining() / smallest)
    return "array of " + std::to_string(value.count) + " " + ggufValueTypeName(*elementType) +
           " at offset " + std::to_string(start) + " (" + what +
           ") runs past the end of the file (" + std::to_string(cursor.remaining()) +
           " bytes left)";
  if (*elementType != GgufValueType::String)
    return cursor.readBytes(value.count * smallest, value.elements, what);
  value.strings.resize(value.count);
  for (uint64_t i = 0; i < value.count; ++i)
    if (std::string error =
            cursor.readString(value.strings[i], "string " + std::to_string(i) + " of " + what);
        !error.empty())
      return error;
  return "";
}

std::string readValue(GgufCursor &cursor, GgufValue &value, const std::string &what) {
  value.offset = cursor.offset();
  if (value.type == GgufValueType::String)
    return cursor.readString(value.text, what);
  if (value.type == GgufValueType::Array)
    return readArray(cursor, value, what);
  return cursor.readBytes(ggufValueBytes(value.type), value.scalar, what);
}

} // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string &path, std::string &error) {
  std::unique_ptr<MappedFile> mapping = MappedFile::open(path, error);
  if (!mapping)
    return nullptr;
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->bytes = mapping->bytes();
  file->mapping = std::move(mapping);
  if (std::string problem = file->parse(); !problem.empty()) {
    error = "'" + path + "': " + problem;
    return nullptr;
  }
  return file;
}

std::unique_ptr<GgufFile> GgufFile::view(std::span<const uint8_t> bytes, std::string &error) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->bytes = bytes;
  error = file->parse();
  return error.empty() ? std::move(file) : nullptr;
}

std::string GgufFile::parse() {
  GgufCursor cursor(bytes);
  uint64_t tensorCount = 0, keyCount = 0;
  if (std::string error = parseHeader(cursor, tensorCount, keyCount); !error.empty())
    return error;
  if (std::string error = parseMetadata(cursor, keyCount); !error.empty())
    return error;
  if (std::string error = readAlignment(); !error.empty())
    return error;
  if (std::string error = parseTensorInfos(cursor, tensorCount); !error.empty())
    return error;
  return placeTensors(cursor.offset());
}

std::string GgufFile::parseHeader(GgufCursor &cursor, uint64_t &tensorCount,
                                  uint64_t &keyCount) {
  std::span<const uint8_t> magic;
  if (std::string error = cursor.readBytes(4, magic, "the magic"); !error.empty())
    return "not a GGUF file: " + error;
  if (std::memcmp(magic.data(), kGgufMagic, 4) != 0)
    return "not a GGUF file: bad magic at offset 0 (expected 'GGUF')";
  if (std::string error = cursor.read(formatVersion, "the version"); !error.empty())
    return error;
  // Version 1 had 32-bit counts and lengths; nothing writes it any more.
  if (formatVersion != 2 && formatVersion != 3)
    return "unsupported GGUF version " + std::to_string(formatVersion) +
           " at offset 4 (this reader supports versions 2 and 3)";
  if (std::string error = cursor.read(tensorCount, "the tensor count"); !error.empty())
    return error;
  if (std::string error = cursor.read(keyCount, "the metadata count"); !error.empty())
    return error;
  if (tensorCount > cursor.remaining() / kSmallestTensorInfoBytes)
    return "tensor count " + std::to_string(tensorCount) +
           " at offset 8 cannot fit the file (each tensor info takes at least " +
           std::to_string(kSmallestTensorInfoBytes) + " bytes, " +
           std::to_string(cursor.remaining()) + " left)";
  if (keyCount > cursor.remaining() / kSmallestEntryBytes)
    return "metadata count " + std::to_string(keyCount) +
           " at offset 16 cannot fit the file (each entry takes at least " +
           std::to_string(kSmallestEntryBytes) + " bytes, " + std::to_string(cursor.remaining()) +
           " left)";
  return "";
}

std::string GgufFile::parseMetadata(GgufCursor &cursor, uint64_t keyCount) {
  entries.reserve(keyCount);
  for (uint64_t i = 0; i < keyCount; ++i) {
    uint64_t start = cursor.offset();
    std::string entry = "metadata entry " + std::to_string(i);
    std::string_view key;
    if (std::string error = cursor.readString(key, "the key of " + entry); !error.empty())
      return error;
    if (entryIndex.count(key))
      return "duplicate metadata key " + quotedKey(key) + " at offset " + std::to_string(start);
    std::string what = "the value of metadata key " + quotedKey(key);
    uint32_t code = 0;
    if (std::string error = cursor.read(code, "the type of " + what); !error.empty())
      return error;
    GgufValue value;
    std::optional<GgufValueType> type = ggufValueType(code);
    if (!type)
      return "unknown value type " + std::to_string(code) + " at offset " +
             std::to_string(cursor.offset() - 4) + " (metadata key " + quotedKey(key) + ")";
    value.type = *type;
    if (std::string error = readValue(cursor, value, what); !error.empty())
      return error;
    entryIndex.emplace(key, entries.size());
    entries.emplace_back(key, std::move(value));
  }
  return "";
}

std::string GgufFile::readAlignment() {
  const GgufValue *value = find("general.alignment");
  if (!value)
    return "";
  uint32_t alignment = 0;
  if (std::string error = uint32("general.alignment", alignment); !error.empty())
    return error;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return "metadata key 'general.alignment' at offset " + std::to_string(value->offset) +
           " is " + std::to_string(alignment) + ", not a power of two";
  dataAlignment = alignment;
  return "";
}

const GgufValue *GgufFile::find(std::string_view key) const {
  auto found = entryIndex.find(key);
  return found == entryIndex.end() ? nullptr : &entries[found->second].second;
}

const GgufTensor *GgufFile::findTensor(std::string_view name) const {
  auto found = tensorIndex.find(name);
  return found == tensorIndex.end() ? nullptr : &tensorList[found->second];
}

std::string GgufFile::typed(std::string_view key, GgufValueType expected,
                            const GgufValue *&value) const {
  value = find(key);
  if (!value)
    return "metadata key " + quotedKey(key) + " is missing";
  if (value->type != expected)
    return "metadata key " + quotedKey(key) + " is " + ggufValueTypeName(value->type) + ", not " +
           ggufValueTypeName(expected);
  return "";
}

std::string GgufFile::uint32(std::string_view key, uint32_t &result) const {
  const GgufValue *value = nullptr;
  if (std::string error = typed(key, GgufValueType::Uint32, value); !error.empty())
    return error;
  std::memcpy(&result, value->scalar.data(), sizeof result);
  return "";
}

std::string GgufFile::float32(std::string_view key, float &result) const {
  const GgufValue *value = nullptr;
  if (std::string error = typed(key, GgufValueType::Float32, value); !error.empty())
    return error;
  std::memcpy(&result, value->scalar.data(), sizeof result);
  return "";
}

std::string GgufFile::string(std::string_view key, std::string_view &result) const {
  const GgufValue *value = nullptr;
  if (std::string error = typed(key, GgufValueType::String, value); !error.empty())
    return error;
  result = value->text;
  return "";
}

std::string GgufFile::arrayLength(std::string_view key, uint64_t &count) const {
  const GgufValue *value = nullptr;
  if (std::string error = typed(key, GgufValueType::Array, value); !error.empty())
    return error;
  count = value->count;
  return "";
}

std::string GgufFile::stringArray(std::string_view key,
                                  std::vector<std::string_view> &result) const {
  const GgufValue *value = nullptr;
  if (std::string error = typed(key, GgufValueType::Array, value); !error.empty())
    return error;
  if (value->elementType != GgufValueType::String)
    return "metadata key " + quotedKey(key) + " is an array of " +
           ggufValueTypeName(value->elementType) + ", not of string";
  result = value->strings;
  return "";
}

bool looksLikeGguf(const std::string &path) {
  char magic[sizeof kGgufMagic] = {};
  std::ifstream file(path, std::ios::binary);
  file.read(magic, sizeof magic);
  if (file.gcount() == sizeof magic && std::memcmp(magic, kGgufMagic, sizeof magic) == 0)
    return true;
  return path.size() >= 5 && (path.ends_with(".gguf") || path.ends_with(".GGUF"));
}

} // namespace mk
