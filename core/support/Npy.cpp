#include "core/support/Npy.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace mk {

namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
// Magic, two version bytes and the header length; 2 bytes of length in
// version 1.0, 4 in versions 2.0 and 3.0.
constexpr size_t kPreambleV1 = kMagic.size() + 2 + 2;
constexpr size_t kPreambleV2 = kMagic.size() + 2 + 4;
// The format requires the data to start on a 64-byte boundary so that it can
// be memory-mapped with any alignment NumPy might want.
constexpr size_t kAlignment = 64;

std::string shapeTuple(const std::vector<int64_t> &shape) {
  std::string tuple = "(";
  for (int64_t dim : shape)
    tuple += std::to_string(dim) + ", ";
  if (shape.size() == 1)
    tuple.pop_back(); // (n,) is Python's one-element tuple
  else if (!shape.empty())
    tuple.resize(tuple.size() - 2);
  return tuple + ")";
}

std::string paddedHeader(const std::vector<int64_t> &shape) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeTuple(shape) + ", }";
  size_t unpadded = kPreambleV1 + header.size() + 1; // +1 for the final newline
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  return header + "\n";
}

uint32_t readLittle(const char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

void appendLittle(std::string &out, uint32_t value, int count) {
  for (int i = 0; i < count; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::string_view trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\n");
  if (begin == std::string_view::npos)
    return {};
  size_t end = text.find_last_not_of(" \t\n");
  return text.substr(begin, end - begin + 1);
}

// The value text of `key` in the header's Python dict literal.
std::optional<std::string_view> dictValue(std::string_view header, std::string_view key) {
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = trim(header.substr(at + quoted.size()));
  if (rest.empty() || rest.front() != ':')
    return std::nullopt;
  rest = trim(rest.substr(1));
  size_t end = !rest.empty() && rest.front() == '(' ? rest.find(')') : rest.find_first_of(",}");
  if (end == std::string_view::npos || (end == 0 && rest.front() != '('))
    return std::nullopt;
  if (rest.front() == '(')
    ++end;
  return trim(rest.substr(0, end));
}

std::optional<std::vector<int64_t>> parseShape(std::string_view tuple) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')')
    return std::nullopt;
  tuple = tuple.substr(1, tuple.size() - 2);
  std::vector<int64_t> shape;
  while (!tuple.empty()) {
    size_t comma = tuple.find(',');
    std::string_view dim = trim(tuple.substr(0, comma));
    tuple = comma == std::string_view::npos ? std::string_view() : tuple.substr(comma + 1);
    if (dim.empty())
      continue; // the trailing comma of (n,)
    int64_t value = 0;
    for (char c : dim) {
      if (c < '0' || c > '9' || value > (INT64_MAX - 9) / 10)
        return std::nullopt;
      value = value * 10 + (c - '0');
    }
    shape.push_back(value);
  }
  return shape;
}

} // namespace

std::string writeNpy(const std::string &path, const std::vector<float> &data,
                     const std::vector<int64_t> &shape) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return path + ": negative dimension " + std::to_string(dim);
    count *= static_cast<uint64_t>(dim);
  }
  if (count != data.size())
    return path + ": shape " + shapeTuple(shape) + " holds " + std::to_string(count) +
           " values but " + std::to_string(data.size()) + " were given";
  std::string header = paddedHeader(shape);
  if (header.size() > UINT16_MAX)
    return path + ": shape too long for an NPY 1.0 header";

  std::string bytes(kMagic);
  bytes += '\x01';
  bytes += '\x00';
  appendLittle(bytes, static_cast<uint32_t>(header.size()), 2);
  bytes += header;
  bytes.reserve(bytes.size() + data.size() * sizeof(float));
  for (float value : data)
    appendLittle(bytes, std::bit_cast<uint32_t>(value), 4);

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return path + ": cannot open for writing: " + std::strerror(errno);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return path + ": write failed: " + std::strerror(errno);
  return "";
}

std::optional<NpyArray> readNpy(const std::string &path, std::string &error) {
  auto fail = [&](const std::string &message) -> std::optional<NpyArray> {
    error = path + ": " + message;
    return std::nullopt;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(std::string("cannot read: ") + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return fail(std::string("cannot read: ") + std::strerror(errno));
  if (bytes.size() < kPreambleV1 || bytes.compare(0, kMagic.size(), kMagic) != 0)
    return fail("not an NPY file");

  uint8_t major = static_cast<uint8_t>(bytes[kMagic.size()]);
  size_t preamble, headerLength;
  const char *lengthField = bytes.data() + kMagic.size() + 2;
  if (major == 1) {
    preamble = kPreambleV1;
    headerLength = readLittle(lengthField, 2);
  } else if ((major == 2 || major == 3) && bytes.size() >= kPreambleV2) {
    preamble = kPreambleV2;
    headerLength = readLittle(lengthField, 4);
  } else {
    return fail("unsupported NPY version " + std::to_string(major));
  }
  if (bytes.size() < preamble + headerLength)
    return fail("truncated header");
  std::string_view header = std::string_view(bytes).substr(preamble, headerLength);

  auto descr = dictValue(header, "descr");
  if (!descr || *descr != "'<f4'")
    return fail("dtype is " + std::string(descr ? *descr : "missing") + ", expected '<f4'");
  auto fortranOrder = dictValue(header, "fortran_order");
  if (!fortranOrder || *fortranOrder != "False")
    return fail("only C-order arrays are supported");
  auto shapeText = dictValue(header, "shape");
  std::optional<std::vector<int64_t>> shape;
  if (shapeText)
    shape = parseShape(*shapeText);
  if (!shape)
    return fail("cannot parse the shape in header " + std::string(trim(header)));

  NpyArray array;
  array.shape = std::move(*shape);
  uint64_t count = 1;
  for (int64_t dim : array.shape) {
    if (dim != 0 && count > (UINT64_MAX / sizeof(float)) / static_cast<uint64_t>(dim))
      return fail("shape " + shapeTuple(array.shape) + " is too large");
    count *= static_cast<uint64_t>(dim);
  }
  size_t payload = bytes.size() - preamble - headerLength;
  if (payload != count * sizeof(float))
    return fail("shape " + shapeTuple(array.shape) + " needs " +
                std::to_string(count * sizeof(float)) + " bytes of data, file has " +
                std::to_string(payload));
  array.data.resize(count);
  const char *values = bytes.data() + preamble + headerLength;
  for (size_t i = 0; i < count; ++i)
    array.data[i] = std::bit_cast<float>(readLittle(values + i * sizeof(float), 4));
  return array;
}

} // namespace mk
