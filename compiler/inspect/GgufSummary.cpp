#include "compiler/inspect/GgufSummary.h"
#include "compiler/inspect/TextFormat.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace mk {

namespace {

// The hyperparameters a llama-family model keeps under "<arch>.", in the
// order a reader wants them.
constexpr const char *kHyperparameters[] = {
    "embedding_length",
    "block_count",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "context_length",
    "rope.dimension_count",
    "rope.freq_base",
    "attention.layer_norm_rms_epsilon",
    "vocab_size",
};

std::string architectureOf(const GgufFile &file) {
  std::string_view architecture;
  return file.string("general.architecture", architecture).empty() ? std::string(architecture)
                                                                   : std::string();
}

template <typename T> T load(const GgufValue &value) {
  T result;
  std::memcpy(&result, value.scalar.data(), sizeof result);
  return result;
}

// Shortest text that reads back as the same value; a whole float as a whole
// number (500000, not 5e+05).
template <typename T> std::string number(T value) {
  char text[400];
  auto end = std::to_chars(text, text + sizeof text, value).ptr;
  if constexpr (std::is_floating_point_v<T>)
    if (value == static_cast<T>(static_cast<int64_t>(value)) && value > -1e15 && value < 1e15)
      end = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed).ptr;
  return std::string(text, end);
}

// A value as text: numbers as numbers, a string quoted, an array as its
// element type and count (a vocabulary is too long to print).
std::string valueText(const GgufValue &value) {
  switch (value.type) {
  case GgufValueType::Uint8: return number(load<uint8_t>(value));
  case GgufValueType::Int8: return number(load<int8_t>(value));
  case GgufValueType::Uint16: return number(load<uint16_t>(value));
  case GgufValueType::Int16: return number(load<int16_t>(value));
  case GgufValueType::Uint32: return number(load<uint32_t>(value));
  case GgufValueType::Int32: return number(load<int32_t>(value));
  case GgufValueType::Uint64: return number(load<uint64_t>(value));
  case GgufValueType::Int64: return number(load<int64_t>(value));
  case GgufValueType::Float32: return number(load<float>(value));
  case GgufValueType::Float64: return number(load<double>(value));
  case GgufValueType::Bool: return load<uint8_t>(value) ? "true" : "false";
  case GgufValueType::String: return jsonString(value.text);
  case GgufValueType::Array:
    return "\"array of " + std::to_string(value.count) + " " +
           ggufValueTypeName(value.elementType) + "\"";
  }
  return "null";
}

std::string dimsText(const std::vector<uint64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

uint64_t tokenCount(const GgufFile &file) {
  uint64_t count = 0;
  return file.arrayLength("tokenizer.ggml.tokens", count).empty() ? count : 0;
}

std::string tokenizerModel(const GgufFile &file) {
  std::string_view model;
  return file.string("tokenizer.ggml.model", model).empty() ? std::string(model) : "";
}

} // namespace

void printGgufSummary(std::ostream &os, const GgufFile &file) {
  os << "file: " << file.fileBytes() << " bytes (" << humanBytes(file.fileBytes())
     << "), GGUF version " << file.version() << ", alignment " << file.alignment()
     << ", data at offset " << file.dataOffset() << "\n";
  std::string architecture = architectureOf(file);
  os << "architecture: " << (architecture.empty() ? "(none)" : architecture) << "\n";
  if (!architecture.empty())
    for (const char *name : kHyperparameters) {
      std::string key = architecture + "." + name;
      const GgufValue *value = file.find(key);
      os << "  " << key << " " << (value ? valueText(*value) : "(missing)") << "\n";
    }
  std::string model = tokenizerModel(file);
  os << "tokenizer: " << (model.empty() ? "(none)" : model) << ", " << tokenCount(file)
     << " tokens\n";
  os << "metadata: " << file.metadata().size() << " keys\n";
  uint64_t total = 0;
  std::map<std::string, std::pair<size_t, uint64_t>> byType;
  for (const GgufTensor &tensor : file.tensors()) {
    total += tensor.bytes;
    auto &entry = byType[tensor.type->name];
    ++entry.first;
    entry.second += tensor.bytes;
  }
  os << "tensors: " << file.tensors().size() << ", " << total << " bytes (" << humanBytes(total)
     << ")\n";
  for (const auto &[type, entry] : byType)
    os << "  " << type << ": " << entry.first << (entry.first == 1 ? " tensor, " : " tensors, ")
       << entry.second << " bytes\n";
  for (const GgufTensor &tensor : file.tensors())
    os << "  " << tensor.name << " " << tensor.type->name << " " << dimsText(tensor.dims) << " "
       << tensor.bytes << " bytes\n";
}

void printGgufJson(std::ostream &os, const GgufFile &file) {
  std::string architecture = architectureOf(file);
  os << "{\n  \"gguf\": {\n    \"fileBytes\": " << file.fileBytes()
     << ",\n    \"version\": " << file.version() << ",\n    \"alignment\": " << file.alignment()
     << ",\n    \"dataOffset\": " << file.dataOffset()
     << ",\n    \"architecture\": " << jsonString(architecture)
     << ",\n    \"metadataKeys\": " << file.metadata().size() << ",\n    \"hyperparameters\": {";
  bool first = true;
  if (!architecture.empty())
    for (const char *name : kHyperparameters)
      if (const GgufValue *value = file.find(architecture + "." + name)) {
        os << (first ? "\n" : ",\n") << "      " << jsonString(name) << ": " << valueText(*value);
        first = false;
      }
  os << (first ? "}" : "\n    }") << ",\n    \"tokenizer\": {\"model\": "
     << jsonString(tokenizerModel(file)) << ", \"tokens\": " << tokenCount(file)
     << "},\n    \"tensors\": [";
  for (size_t i = 0; i < file.tensors().size(); ++i) {
    const GgufTensor &tensor = file.tensors()[i];
    os << (i ? ",\n" : "\n") << "      {\"name\": " << jsonString(tensor.name)
       << ", \"type\": " << jsonString(tensor.type->name) << ", \"dims\": " << dimsText(tensor.dims)
       << ", \"offset\": " << tensor.offset << ", \"bytes\": " << tensor.bytes << "}";
  }
  os << (file.tensors().empty() ? "]" : "\n    ]") << "\n  }\n}\n";
}

} // namespace mk
