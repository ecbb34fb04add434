#include "frontends/onnx/OnnxLoader.h"

#include "core/support/RegularFile.h"
#include "frontends/onnx/ImportError.h"
#include "frontends/onnx/LazyValues.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace mk::onnx_import {

namespace {

// A descriptor of the regular file `path` (core/support/RegularFile.h), for
// `what` ("model", "the external data file of ...").
int openRegularFile(const std::string &path, const std::string &what) {
  std::string error;
  int fd = mk::openRegularFile(path, what, error);
  if (fd < 0)
    fail(error);
  return fd;
}

// Closes the descriptor on every path out, including ImportError.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() { ::close(fd); }
};

// The file format's version and the default domain's opset. The importer
// reads ops with the meaning they have from opset 13 on (Softmax over one
// axis, Squeeze / Unsqueeze / ReduceSum axes as inputs) and has been checked
// against onnxruntime up to opset 23; a model declaring another opset would
// be read with meanings it does not have. IR 3 is the first with opset
// imports; a version past the newest ONNX release may change what fields mean.
void checkVersions(const onnx::ModelProto &proto, const std::string &path) {
  if (proto.ir_version() < kMinIrVersion || proto.ir_version() > kMaxIrVersion)
    fail("'" + path + "' declares ONNX IR version " + std::to_string(proto.ir_version()) +
         "; mkc reads IR versions " + std::to_string(kMinIrVersion) + " to " +
         std::to_string(kMaxIrVersion));
  int64_t declared = -1;
  for (const auto &opset : proto.opset_import()) {
    if (!opset.domain().empty() && opset.domain() != "ai.onnx")
      continue;
    if (declared >= 0 && declared != opset.version())
      fail("'" + path + "' declares the default ONNX domain twice (opsets " +
           std::to_string(declared) + " and " + std::to_string(opset.version()) + ")");
    declared = opset.version();
  }
  if (declared < 0)
    fail("'" + path + "' declares no opset for the default ONNX domain");
  if (declared < kMinOpset || declared > kMaxOpset)
    fail("'" + path + "' declares ONNX opset " + std::to_string(declared) +
         "; mkc supports opsets " + std::to_string(kMinOpset) + " to " +
         std::to_string(kMaxOpset));
}

} // namespace

LoadedModel loadModel(const std::string &path) {
  FileDescriptor file{openRegularFile(path, "model")};
  LoadedModel model;
  google::protobuf::io::FileInputStream raw(file.fd);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if (!model.proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    fail("'" + path + "' is not a valid ONNX model: the protobuf does not parse "
         "(truncated or corrupt file?)");
  if (!model.proto.has_graph() || model.proto.graph().node_size() == 0)
    fail("'" + path + "' is not a valid ONNX model: it has no graph nodes");
  checkVersions(model.proto, path);
  model.directory = fs::absolute(fs::path(path)).parent_path().string();
  return model;
}

namespace {

struct ElementFormat {
  ElementKind kind;
  int bytes;
  StorageType storage;
};

ElementFormat formatOf(int dataType, const std::string &what) {
  using TP = onnx::TensorProto;
  switch (dataType) {
  case TP::FLOAT:
    return {ElementKind::Float, 4, StorageType::F32};
  case TP::FLOAT16:
    return {ElementKind::Float, 2, StorageType::F16};
  case TP::BFLOAT16:
    return {ElementKind::Float, 2, StorageType::BF16};
  case TP::DOUBLE:
    return {ElementKind::Float, 8, StorageType::F32};
  case TP::INT64:
  case TP::UINT64:
    return {ElementKind::Int, 8, StorageType::F32};
  case TP::INT32:
  case TP::UINT32:
    return {ElementKind::Int, 4, StorageType::F32};
  case TP::INT16:
  case TP::UINT16:
    return {ElementKind::Int, 2, StorageType::F32};
  case TP::INT8:
  case TP::UINT8:
    return {ElementKind::Int, 1, StorageType::F32};
  case TP::BOOL:
    return {ElementKind::Bool, 1, StorageType::F32};
  default:
    fail(what + ": element type " + std::to_string(dataType) + " is not supported");
  }
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal: renormalize
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A container of `count` elements for `what`, or an ImportError naming it
// when memory runs out: the counts come from the file, and were checked
// against the bytes it holds, but a real tensor may still not fit.
template <class Container>
Container allocate(size_t count, const std::string &what) {
  try {
    return Container(count, typename Container::value_type{});
  } catch (const std::bad_alloc &) {
    fail(what + ": out of memory allocating " + std::to_string(count) + " elements");
  } catch (const std::length_error &) {
    fail(what + ": " + std::to_string(count) + " elements are more than this machine can hold");
  }
}

// Integer element i of little-endian raw bytes; kept out of doubles so that
// INT64_MAX (a common Slice end) survives.
int64_t rawInteger(const char *data, int64_t i, int dataType) {
  using TP = onnx::TensorProto;
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return static_cast<int64_t>(value);
  };
  switch (dataType) {
  case TP::INT64:
  case TP::UINT64:
    return load(int64_t{});
  case TP::INT32:
    return load(int32_t{});
  case TP::UINT32:
    return load(uint32_t{});
  case TP::INT16:
    return load(int16_t{});
  case TP::UINT16:
    return load(uint16_t{});
  case TP::INT8:
    return load(int8_t{});
  default: // uint8, bool
    return load(uint8_t{});
  }
}

// Floating-point element i of little-endian raw bytes.
double rawFloat(const char *data, int64_t i, int dataType) {
  using TP = onnx::TensorProto;
  auto load = [&](auto zero) {
    decltype(zero) value;
    std::memcpy(&value, data + i * sizeof(value), sizeof(value));
    return value;
  };
  switch (dataType) {
  case TP::FLOAT:
    return load(float{});
  case TP::DOUBLE:
    return load(double{});
  case TP::FLOAT16:
    return halfToFloat(load(uint16_t{}));
  case TP::BFLOAT16:
    return bfloat16ToFloat(load(uint16_t{}));
  default:
    return 0;
  }
}

// Where an initializer's external data lies, checked to lie inside its file.
struct ExternalRange {
  std::string path, location;
  int64_t offset = 0, length = 0;
};

ExternalRange locateExternalData(const onnx::TensorProto &proto, const std::string &directory,
                                 const std::string &what, int64_t expectedBytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  // A number must be all digits: "12abc" is not 12.
  auto number = [&](const onnx::StringStringEntryProto &entry) {
    const std::string &text = entry.value();
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0)
      fail(what + ": external data " + entry.key() + " '" + text +
           "' is not a non-negative number");
    return value;
  };
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = number(entry);
    else if (entry.key() == "length")
      length = number(entry);
  }
  if (location.empty())
    fail(what + ": external data has no location");
  fs::path relative(location);
  if (relative.is_absolute())
    fail(what + ": external data location '" + location + "' must be relative to the model");
  fs::path base = fs::weakly_canonical(fs::path(directory));
  fs::path file = fs::weakly_canonical(base / relative);
  auto [baseEnd, fileIt] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (baseEnd != base.end())
    fail(what + ": external data location '" + location + "' escapes the model's folder");
  if (!fs::exists(file))
    fail(what + ": external data file '" + location + "' does not exist");
  FileDescriptor data{openRegularFile(file.string(), "the external data file of " + what)};
  struct stat status;
  if (::fstat(data.fd, &status) != 0)
    fail(what + ": cannot read the size of '" + location + "': " + std::strerror(errno));
  int64_t fileSize = static_cast<int64_t>(status.st_size);
  if (length < 0)
    length = expectedBytes;
  if (length != expectedBytes)
    fail(what + ": external data length " + std::to_string(length) + " does not match its shape (" +
         std::to_string(expectedBytes) + " bytes)");
  if (offset < 0 || offset > fileSize || length > fileSize - offset)
    fail(what + ": external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
         ") is outside '" + location + "' (" + std::to_string(fileSize) + " bytes)");
  return {file.string(), location, offset, length};
}

std::string readExternalData(const ExternalRange &range, const std::string &what) {
  FileDescriptor data{openRegularFile(range.path, "the external data file of " + what)};
  const std::string &location = range.location;
  int64_t offset = range.offset, length = range.length;
  // Only now, with the bytes known to be in the file, is room made for them.
  std::string bytes = allocate<std::string>(static_cast<size_t>(length), what);
  int64_t done = 0;
  while (done < length) {
    ssize_t got = ::pread(data.fd, bytes.data() + done, static_cast<size_t>(length - done),
                          static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      fail(what + ": cannot read external data from '" + location + "': " +
           (got < 0 ? std::strerror(errno) : "the file ended early"));
    done += got;
  }
  return bytes;
}

// How many values the typed repeated field of the tensor's type holds.
int64_t typedValueCount(const onnx::TensorProto &proto) {
  using TP = onnx::TensorProto;
  switch (proto.data_type()) {
  case TP::FLOAT:
    return proto.float_data_size();
  case TP::DOUBLE:
    return proto.double_data_size();
  case TP::INT64:
    return proto.int64_data_size();
  case TP::UINT64:
  case TP::UINT32:
    return proto.uint64_data_size();
  default: // float16, bfloat16, int32 and narrower, bool
    return proto.int32_data_size();
  }
}

} // namespace

float rawFloatElement(const char *data, int64_t i, int dataType) {
  return static_cast<float>(rawFloat(data, i, dataType));
}

Tensor decodeTensor(const onnx::TensorProto &proto, const std::string &directory,
                    const std::string &what) {
  using TP = onnx::TensorProto;
  ElementFormat format = formatOf(proto.data_type(), what);
  Tensor tensor;
  tensor.kind = format.kind;
  tensor.storage = format.storage;
  int64_t count = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d))
      fail(what + ": invalid shape");
    tensor.shape.push_back(d);
    count *= d;
  }
  int64_t bytes = count * format.bytes;

  // What the file holds is compared with what the shape declares before
  // anything is allocated: a header claiming 2^40 elements over a few bytes
  // is refused here, not by the allocator.
  std::string external;
  const std::string *raw = nullptr;
  if (proto.data_location() == TP::EXTERNAL) {
    ExternalRange range = locateExternalData(proto, directory, what, bytes);
    if (format.kind == ElementKind::Float && count > 0 && count >= lazyWeightElements()) {
      tensor.lazy = externalValues(range.path, static_cast<uint64_t>(range.offset),
                                   static_cast<uint64_t>(count), proto.data_type(), what);
      return tensor;
    }
    external = readExternalData(range, what);
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
    if (static_cast<int64_t>(raw->size()) != bytes)
      fail(what + ": holds " + std::to_string(raw->size()) + " bytes, its shape needs " +
           std::to_string(bytes));
  } else {
    int64_t have = typedValueCount(proto);
    if (have != count)
      fail(what + ": holds " + std::to_string(have) + " values, its shape needs " +
           std::to_string(count));
  }
  if (format.kind == ElementKind::Float)
    tensor.floats = allocate<std::vector<float>>(static_cast<size_t>(count), what);
  else
    tensor.ints = allocate<std::vector<int64_t>>(static_cast<size_t>(count), what);
  auto store = [&](int64_t i, double value) {
    if (format.kind == ElementKind::Float)
      tensor.floats[i] = static_cast<float>(value);
    else
      tensor.ints[i] = format.kind == ElementKind::Bool ? value != 0 : static_cast<int64_t>(value);
  };

  if (raw) {
    for (int64_t i = 0; i < count; ++i) {
      if (format.kind == ElementKind::Float)
        tensor.floats[i] = static_cast<float>(rawFloat(raw->data(), i, proto.data_type()));
      else
        tensor.ints[i] = rawInteger(raw->data(), i, proto.data_type());
    }
    if (format.kind == ElementKind::Bool)
      for (int64_t &v : tensor.ints)
        v = v != 0;
    return tensor;
  }
  switch (proto.data_type()) {
  case TP::FLOAT:
    for (int64_t i = 0; i < count; ++i)
      store(i, proto.float_data(i));
    break;
  case TP::DOUBLE:
    for (int64_t i = 0; i < count; ++i)
      store(i, proto.double_data(i));
    break;
  case TP::INT64:
    for (int64_t i = 0; i < count; ++i)
      tensor.ints[i] = proto.int64_data(i);
    break;
  case TP::UINT64:
  case TP::UINT32:
    for (int64_t i = 0; i < count; ++i)
      tensor.ints[i] = static_cast<int64_t>(proto.uint64_data(i));
    break;
  case TP::FLOAT16:
    for (int64_t i = 0; i < count; ++i)
      store(i, halfToFloat(static_cast<uint16_t>(proto.int32_data(i))));
    break;
  case TP::BFLOAT16:
    for (int64_t i = 0; i < count; ++i)
      store(i, bfloat16ToFloat(static_cast<uint16_t>(proto.int32_data(i))));
    break;
  default: // int32 and narrower, bool
    for (int64_t i = 0; i < count; ++i)
      store(i, proto.int32_data(i));
  }
  return tensor;
}

} // namespace mk::onnx_import
