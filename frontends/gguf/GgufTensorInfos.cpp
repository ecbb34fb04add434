// The tensor infos of a GGUF file and the data section they point into:
// names unique, 1 to 4 dimensions whose product fits 64 bits, a known ggml
// type whose block divides the first dimension, offsets aligned, and every
// tensor's bytes inside the file and apart from every other's.
#include "frontends/gguf/GgufCursor.h"
#include "frontends/gguf/GgufFile.h"

#include <algorithm>

namespace mk {

namespace {

constexpr uint32_t kMaxDims = 4;

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

std::string dimsText(const std::vector<uint64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string range(uint64_t begin, uint64_t bytes) {
  return "[" + std::to_string(begin) + ", " + std::to_string(begin + bytes) + ")";
}

// The element count and byte size of `tensor`, refused when they overflow
// or the first dimension is not whole blocks.
std::string sizeTensor(GgufTensor &tensor) {
  std::string name = "tensor " + quoted(tensor.name);
  uint64_t elements = 1;
  for (uint64_t dim : tensor.dims) {
    // ggml holds dimensions as int64_t.
    if (dim > uint64_t(INT64_MAX) || (dim != 0 && elements > uint64_t(INT64_MAX) / dim))
      return name + ": dimensions " + dimsText(tensor.dims) +
             " overflow 64 bits (at offset " + std::to_string(tensor.infoOffset) + ")";
    elements *= dim;
  }
  const GgmlTypeInfo &type = *tensor.type;
  if (tensor.dims[0] % type.blockElements != 0)
    return name + ": first dimension " + std::to_string(tensor.dims[0]) + " is not a multiple of " +
           type.name + "'s block of " + std::to_string(type.blockElements) + " elements";
  uint64_t blocks = elements / type.blockElements;
  if (blocks > UINT64_MAX / type.blockBytes)
    return name + ": " + std::to_string(blocks) + " blocks of " + type.name +
           " overflow 64 bits of bytes";
  tensor.elements = elements;
  tensor.bytes = blocks * type.blockBytes;
  return "";
}

} // namespace

std::string GgufFile::parseTensorInfos(GgufCursor &cursor, uint64_t tensorCount) {
  tensorList.reserve(tensorCount);
  for (uint64_t i = 0; i < tensorCount; ++i) {
    GgufTensor tensor;
    tensor.infoOffset = cursor.offset();
    std::string info = "tensor info " + std::to_string(i);
    if (std::string error = cursor.readString(tensor.name, "the name of " + info); !error.empty())
      return error;
    if (tensorIndex.count(tensor.name))
      return "duplicate tensor name " + quoted(tensor.name) + " at offset " +
             std::to_string(tensor.infoOffset);
    std::string what = "tensor " + quoted(tensor.name);
    uint32_t dimCount = 0;
    if (std::string error = cursor.read(dimCount, "the dimension count of " + what);
        !error.empty())
      return error;
    if (dimCount < 1 || dimCount > kMaxDims)
      return what + ": " + std::to_string(dimCount) + " dimensions at offset " +
             std::to_string(cursor.offset() - 4) + " (1 to " + std::to_string(kMaxDims) +
             " are allowed)";
    tensor.dims.resize(dimCount);
    for (uint32_t d = 0; d < dimCount; ++d)
      if (std::string error =
              cursor.read(tensor.dims[d], "dimension " + std::to_string(d) + " of " + what);
          !error.empty())
        return error;
    if (std::string error = cursor.read(tensor.typeCode, "the ggml type of " + what);
        !error.empty())
      return error;
    tensor.type = ggmlTypeInfo(tensor.typeCode);
    if (!tensor.type)
      return what + ": unknown ggml type " + std::to_string(tensor.typeCode) + " at offset " +
             std::to_string(cursor.offset() - 4);
    if (std::string error = cursor.read(tensor.offset, "the data offset of " + what);
        !error.empty())
      return error;
    if (tensor.offset % dataAlignment != 0)
      return what + ": data offset " + std::to_string(tensor.offset) + " at offset " +
             std::to_string(cursor.offset() - 8) + " is not a multiple of the alignment " +
             std::to_string(dataAlignment);
    if (std::string error = sizeTensor(tensor); !error.empty())
      return error;
    tensorIndex.emplace(tensor.name, tensorList.size());
    tensorList.push_back(std::move(tensor));
  }
  return "";
}

std::string GgufFile::placeTensors(uint64_t infosEnd) {
  // The data section starts at the aligned end of the tensor infos; the
  // alignment is at most 2^31, so this cannot overflow.
  dataStart = (infosEnd + dataAlignment - 1) / dataAlignment * dataAlignment;
  uint64_t available = dataStart <= bytes.size() ? bytes.size() - dataStart : 0;
  std::vector<const GgufTensor *> byOffset;
  for (GgufTensor &tensor : tensorList) {
    if (tensor.offset > available || tensor.bytes > available - tensor.offset)
      return "tensor " + quoted(tensor.name) + ": data of " + std::to_string(tensor.bytes) +
             " bytes at offset " + std::to_string(tensor.offset) +
             " of the data section (which starts at " + std::to_string(dataStart) +
             ") runs past the end of the file (" + std::to_string(bytes.size()) + " bytes)";
    tensor.data = bytes.subspan(dataStart + tensor.offset, tensor.bytes);
    byOffset.push_back(&tensor);
  }
  std::sort(byOffset.begin(), byOffset.end(), [](const GgufTensor *a, const GgufTensor *b) {
    return a->offset != b->offset ? a->offset < b->offset : a->bytes < b->bytes;
  });
  // Each tensor against the one reaching furthest among those before it.
  const GgufTensor *furthest = nullptr;
  for (const GgufTensor *tensor : byOffset) {
    if (tensor->bytes == 0)
      continue;
    if (furthest && furthest->offset + furthest->bytes > tensor->offset)
      return "tensors " + quoted(furthest->name) + " and " + quoted(tensor->name) +
             " overlap: data " + range(furthest->offset, furthest->bytes) + " and " +
             range(tensor->offset, tensor->bytes) + " of the data section";
    if (!furthest || tensor->offset + tensor->bytes > furthest->offset + furthest->bytes)
      furthest = tensor;
  }
  return "";
}

} // namespace mk
