#include "core/support/Npy.h"


#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "mk_npy_test_" + name + ".npy";
}

std::string fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A version 1.0 file with header `dict`, padded as the format asks.
std::string npyV1(std::string dict, const std::string &payload) {
  dict.append(63 - (10 + dict.size()) % 64, ' ');
  dict += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + char(dict.size() & 0xff) +
         char(dict.size() >> 8) + dict + payload;
}

TEST(NpyTest, HeaderIsNumpyVersion1WithAlignedDictAndLittleEndianData) {
  std::string path = tempPath("header");
  ASSERT_EQ("", mk::writeNpy(path, {1.0f, -2.0f, 0.5f, 3.0f, 0.0f, 1e-3f}, {2, 3}));
  std::string bytes = fileBytes(path);

  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLength = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  std::string header = bytes.substr(10, headerLength);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u)
      << header;
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(bytes.size(), 10 + headerLength + 6 * 4);
  // 1.0f is 0x3f800000 and -2.0f is 0xc0000000, least significant byte first.
  EXPECT_EQ(bytes.substr(10 + headerLength, 8), std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
}

TEST(NpyTest, OneDimensionalShapeIsAOneElementTuple) {
  std::string path = tempPath("one_dim");
  ASSERT_EQ("", mk::writeNpy(path, {1, 2, 3, 4, 5}, {5}));
  EXPECT_NE(fileBytes(path).find("'shape': (5,), }"), std::string::npos);
}

TEST(NpyTest, RoundTripsValuesAndShapes) {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {7}, {}, {0}, {2, 1, 3}};
  for (const auto &shape : shapes) {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    std::vector<float> data;
    for (int64_t i = 0; i < count; ++i)
      data.push_back(std::ldexp(float(i) - 2.5f, int(i % 5) - 2));
    std::string path = tempPath("roundtrip");
    ASSERT_EQ("", mk::writeNpy(path, data, shape));
    std::string error;
  auto array = mk::readNpy(path, error);
    ASSERT_TRUE(bool(array)) << error;
    EXPECT_EQ(array->shape, shape);
    EXPECT_EQ(array->data, data);
  }
}

TEST(NpyTest, ReadsAFileWrittenByNumpy) {
  std::string error;
  auto array = mk::readNpy(MKC_FIXTURES_DIR "/qwen2.hf_logits.npy", error);
  ASSERT_TRUE(bool(array)) << error;
  // 12 prompt and generated positions, 300 logits each (configs.json: qwen2).
  EXPECT_EQ(array->shape, (std::vector<int64_t>{12, 300}));
  ASSERT_EQ(array->data.size(), 12u * 300u);
  bool allFinite = true, anyNonZero = false;
  for (float value : array->data) {
    allFinite &= std::isfinite(value);
    anyNonZero |= value != 0.0f;
  }
  EXPECT_TRUE(allFinite);
  EXPECT_TRUE(anyNonZero);
}

TEST(NpyTest, WriteRejectsDataThatDoesNotFillTheShape) {
  std::string err = mk::writeNpy(tempPath("mismatch"), {1, 2, 3}, {2, 2});
  ASSERT_FALSE(err.empty());
  EXPECT_NE(err.find("holds 4 values but 3 were given"),
            std::string::npos);
}

TEST(NpyTest, WriteReportsAnUnwritablePath) {
  std::string err = mk::writeNpy("/nonexistent-directory/x.npy", {1}, {1});
  ASSERT_FALSE(err.empty());
  EXPECT_NE(err.find("cannot open"), std::string::npos);
}

TEST(NpyTest, ReadRejectsOtherDtypes) {
  std::string path = tempPath("f8");
  writeBytes(path, npyV1("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                         std::string(8, '\0')));
  std::string error;
  auto array = mk::readNpy(path, error);
  ASSERT_FALSE(bool(array));
  EXPECT_NE(error.find("'<f8'"), std::string::npos);
}

TEST(NpyTest, ReadRejectsFortranOrder) {
  std::string path = tempPath("fortran");
  writeBytes(path, npyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                         std::string(16, '\0')));
  std::string error;
  auto array = mk::readNpy(path, error);
  ASSERT_FALSE(bool(array));
  EXPECT_NE(error.find("C-order"), std::string::npos);
}

TEST(NpyTest, ReadRejectsTruncatedData) {
  std::string path = tempPath("truncated");
  ASSERT_EQ("", mk::writeNpy(path, {1, 2, 3, 4}, {4}));
  std::string bytes = fileBytes(path);
  writeBytes(path, bytes.substr(0, bytes.size() - 1));
  std::string error;
  auto array = mk::readNpy(path, error);
  ASSERT_FALSE(bool(array));
  EXPECT_NE(error.find("bytes of data"), std::string::npos);
}

TEST(NpyTest, ReadRejectsFilesThatAreNotNpy) {
  std::string path = tempPath("not_npy");
  writeBytes(path, "just some text, long enough");
  std::string error;
  auto array = mk::readNpy(path, error);
  ASSERT_FALSE(bool(array));
  EXPECT_NE(error.find("not an NPY file"), std::string::npos);
}

} // namespace
