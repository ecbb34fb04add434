// Initializers of external data read on demand (frontends/onnx/LazyValues.h):
// the values a decoded tensor holds, from any element, in each float type;
// and a data file that shrinks after the model was read is an error naming
// the tensor, not a SIGBUS.
#include "frontends/onnx/OnnxLoader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace mk::onnx_import {
namespace {

// Sets MKC_LAZY_WEIGHT_ELEMENTS for one test.
class LazyBound {
public:
  explicit LazyBound(const char *elements) { ::setenv("MKC_LAZY_WEIGHT_ELEMENTS", elements, 1); }
  ~LazyBound() { ::unsetenv("MKC_LAZY_WEIGHT_ELEMENTS"); }
};

std::string folder() { return ::testing::TempDir(); }

// An initializer of `count` elements of `dataType` at byte `offset` of
// `file` (in folder()), whose bytes `bytes` are written there.
onnx::TensorProto externalTensor(const std::string &file, int dataType, int64_t count,
                                 int64_t offset, const std::vector<uint8_t> &bytes) {
  {
    std::ofstream out(folder() + file, std::ios::binary | std::ios::trunc);
    std::vector<char> padding(static_cast<size_t>(offset), 0);
    out.write(padding.data(), static_cast<std::streamsize>(padding.size()));
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(dataType);
  proto.add_dims(count);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char *key, const std::string &value) {
    auto *entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", file);
  add("offset", std::to_string(offset));
  add("length", std::to_string(bytes.size()));
  return proto;
}

template <class T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(LazyInitializer, ReadsTheValuesADecodedTensorHolds) {
  std::vector<float> f32(1000);
  std::vector<uint16_t> bf16(1000), f16(1000);
  for (size_t i = 0; i < f32.size(); ++i) {
    f32[i] = static_cast<float>(i) * 0.25f - 100.0f;
    bf16[i] = static_cast<uint16_t>(0x3f80 + i);       // 1.0 and up
    f16[i] = static_cast<uint16_t>(0x3c00 + (i % 900)); // 1.0 and up
  }
  struct Case {
    int type;
    std::vector<uint8_t> bytes;
  };
  for (const Case &c : {Case{onnx::TensorProto::FLOAT, bytesOf(f32)},
                        Case{onnx::TensorProto::BFLOAT16, bytesOf(bf16)},
                        Case{onnx::TensorProto::FLOAT16, bytesOf(f16)}}) {
    onnx::TensorProto proto = externalTensor("lazy.data", c.type, 1000, 4096 + 6, c.bytes);
    Tensor eager = decodeTensor(proto, folder(), "initializer 'w'");
    ASSERT_FALSE(eager.isLazy());
    LazyBound everything("1");
    Tensor lazy = decodeTensor(proto, folder(), "initializer 'w'");
    ASSERT_TRUE(lazy.isLazy());
    EXPECT_TRUE(lazy.floats.empty());
    EXPECT_EQ(lazy.shape, eager.shape);
    EXPECT_EQ(materializeTensor(lazy).floats, eager.floats) << "type " << c.type;
    std::vector<float> middle(10);
    lazy.lazy->read(495, 10, middle.data());
    EXPECT_TRUE(std::equal(middle.begin(), middle.end(), eager.floats.begin() + 495));
    lazy.lazy->release();
    lazy.lazy->read(0, 10, middle.data()); // mapped again after a release
    EXPECT_TRUE(std::equal(middle.begin(), middle.end(), eager.floats.begin()));
  }
}

TEST(LazyInitializer, AFileThatShrankIsAnErrorNotASigbus) {
  std::vector<float> values(5000, 1.5f);
  onnx::TensorProto proto =
      externalTensor("shrinking.data", onnx::TensorProto::FLOAT, 5000, 0, bytesOf(values));
  LazyBound everything("1");
  Tensor lazy = decodeTensor(proto, folder(), "initializer 'w'");
  ASSERT_TRUE(lazy.isLazy());
  ASSERT_EQ(::truncate((folder() + "shrinking.data").c_str(), 100), 0);
  std::vector<float> out(5000);
  try {
    lazy.lazy->read(0, out.size(), out.data());
    FAIL() << "read a file that no longer holds the tensor";
  } catch (const std::runtime_error &error) {
    EXPECT_NE(std::string(error.what()).find("initializer 'w': external data file"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("no longer holds its bytes [0, +20000)"),
              std::string::npos)
        << error.what();
  }
}

} // namespace
} // namespace mk::onnx_import
