#include "compiler/support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <bit>
#include <optional>

namespace mk {

static constexpr llvm::StringLiteral kMagic("\x93NUMPY");
// Magic, two version bytes and the header length; 2 bytes of length in
// version 1.0, 4 in versions 2.0 and 3.0.
static constexpr size_t kPreambleV1 = kMagic.size() + 2 + 2;
static constexpr size_t kPreambleV2 = kMagic.size() + 2 + 4;
// The format requires the data to start on a 64-byte boundary so that it can
// be memory-mapped with any alignment NumPy might want.
static constexpr size_t kAlignment = 64;

static llvm::Error npyError(const std::string &path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), path + ": " + message);
}

static std::string shapeTuple(const std::vector<int64_t> &shape) {
  std::string tuple = "(";
  for (int64_t dim : shape)
    tuple += std::to_string(dim) + ", ";
  if (shape.size() == 1)
    tuple.pop_back(); // (n,) is Python's one-element tuple
  else if (!shape.empty())
    tuple.resize(tuple.size() - 2);
  return tuple + ")";
}

static std::string paddedHeader(const std::vector<int64_t> &shape) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeTuple(shape) + ", }";
  size_t unpadded = kPreambleV1 + header.size() + 1; // +1 for the final newline
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  return header + "\n";
}

llvm::Error writeNpy(const std::string &path, const std::vector<float> &data,
                     const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return npyError(path, "negative dimension " + llvm::Twine(dim));
    count *= dim;
  }
  if (count != static_cast<int64_t>(data.size()))
    return npyError(path, "shape " + shapeTuple(shape) + " holds " + llvm::Twine(count) +
                              " values but " + llvm::Twine(data.size()) + " were given");
  std::string header = paddedHeader(shape);
  if (header.size() > UINT16_MAX)
    return npyError(path, "shape too long for an NPY 1.0 header");

  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return npyError(path, "cannot open for writing: " + ec.message());
  llvm::support::endian::Writer writer(out, llvm::support::little);
  out << kMagic;
  writer.write<uint8_t>(1);
  writer.write<uint8_t>(0);
  writer.write<uint16_t>(static_cast<uint16_t>(header.size()));
  out << header;
  for (float value : data)
    writer.write<uint32_t>(std::bit_cast<uint32_t>(value));
  out.close();
  if (out.has_error()) {
    ec = out.error();
    out.clear_error();
    return npyError(path, "write failed: " + ec.message());
  }
  return llvm::Error::success();
}

// Extracts the value text of `key` from the header's Python dict literal.
static std::optional<llvm::StringRef> dictValue(llvm::StringRef header, llvm::StringRef key) {
  std::string quoted = ("'" + key + "'").str();
  size_t at = header.find(quoted);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef rest = header.drop_front(at + quoted.size()).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end = rest.startswith("(") ? rest.find(')') + 1 : rest.find_first_of(",}");
  if (end == 0 || end == llvm::StringRef::npos)
    return std::nullopt;
  return rest.take_front(end).trim();
}

static std::optional<std::vector<int64_t>> parseShape(llvm::StringRef tuple) {
  if (!tuple.consume_front("(") || !tuple.consume_back(")"))
    return std::nullopt;
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> dims;
  tuple.split(dims, ',');
  for (llvm::StringRef dim : dims) {
    dim = dim.trim();
    if (dim.empty())
      continue; // the trailing comma of (n,)
    int64_t value;
    if (dim.getAsInteger(10, value) || value < 0)
      return std::nullopt;
    shape.push_back(value);
  }
  return shape;
}

llvm::Expected<NpyArray> readNpy(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return npyError(path, "cannot read: " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < kPreambleV1 || !bytes.startswith(kMagic))
    return npyError(path, "not an NPY file");

  uint8_t major = bytes[kMagic.size()];
  size_t preamble, headerLength;
  const char *lengthField = bytes.data() + kMagic.size() + 2;
  if (major == 1) {
    preamble = kPreambleV1;
    headerLength = llvm::support::endian::read16le(lengthField);
  } else if ((major == 2 || major == 3) && bytes.size() >= kPreambleV2) {
    preamble = kPreambleV2;
    headerLength = llvm::support::endian::read32le(lengthField);
  } else {
    return npyError(path, "unsupported NPY version " + llvm::Twine(major));
  }
  if (bytes.size() < preamble + headerLength)
    return npyError(path, "truncated header");
  llvm::StringRef header = bytes.substr(preamble, headerLength);

  auto descr = dictValue(header, "descr");
  if (!descr || *descr != "'<f4'")
    return npyError(path, "dtype is " + (descr ? *descr : "missing") + ", expected '<f4'");
  auto fortranOrder = dictValue(header, "fortran_order");
  if (!fortranOrder || *fortranOrder != "False")
    return npyError(path, "only C-order arrays are supported");
  auto shapeText = dictValue(header, "shape");
  std::optional<std::vector<int64_t>> shape;
  if (shapeText)
    shape = parseShape(*shapeText);
  if (!shape)
    return npyError(path, "cannot parse the shape in header " + header.rtrim());

  NpyArray array;
  array.shape = std::move(*shape);
  size_t count = 1;
  for (int64_t dim : array.shape)
    count *= static_cast<size_t>(dim);
  llvm::StringRef payload = bytes.drop_front(preamble + headerLength);
  if (payload.size() != count * sizeof(float))
    return npyError(path, "shape " + shapeTuple(array.shape) + " needs " +
                              llvm::Twine(count * sizeof(float)) + " bytes of data, file has " +
                              llvm::Twine(payload.size()));
  array.data.resize(count);
  for (size_t i = 0; i < count; ++i)
    array.data[i] =
        std::bit_cast<float>(llvm::support::endian::read32le(payload.data() + i * sizeof(float)));
  return array;
}

} // namespace mk
