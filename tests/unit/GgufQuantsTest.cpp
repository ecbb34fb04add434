// Dequantization against gguf-py's reference dequantizers (gguf.quants, the
// oracle), on every tensor of the fixture: each value equal bit for bit,
// the K-quants too, since ggml, gguf-py and this reader compute each value
// in the same order in f32 (NaNs are compared as NaNs: whether a signalling
// f16 NaN is made quiet depends on numpy's conversion path). And the
// widening of f16 and bf16, and refusals of sizes and types.
#include "frontends/gguf/GgufFile.h"
#include "frontends/gguf/GgufQuants.h"

#include "core/support/Npy.h"
#include "GgufFixture.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <set>

namespace {

using mk::testing::ggufFixturePath;

// Every tensor of a fixture file against its oracle; adds the types seen.
void expectEqualsTheOracle(const char *fixture, std::set<std::string> &types) {
  std::string error;
  auto file = mk::GgufFile::open(ggufFixturePath(fixture), error);
  ASSERT_TRUE(file) << error;
  for (const mk::GgufTensor &tensor : file->tensors()) {
    std::string name(tensor.name);
    auto oracle = mk::readNpy(ggufFixturePath(name + ".npy"), error);
    ASSERT_TRUE(oracle) << error;
    ASSERT_EQ(oracle->data.size(), tensor.elements) << name;
    std::vector<float> values(tensor.elements);
    ASSERT_EQ(mk::dequantizeTensor(tensor, values), "") << name;
    size_t differences = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      float expected = oracle->data[i];
      bool same = std::isnan(expected)
                      ? std::isnan(values[i]) && std::signbit(values[i]) == std::signbit(expected)
                      : std::bit_cast<uint32_t>(values[i]) == std::bit_cast<uint32_t>(expected);
      if (!same && differences++ < 5)
        ADD_FAILURE() << name << " (" << tensor.type->name << ") element " << i << ": "
                      << values[i] << " != " << expected;
    }
    EXPECT_EQ(differences, 0u) << name;
    types.insert(tensor.type->name);
  }
}

// model.gguf (a model) and quants.gguf (one tensor of each further type)
// hold every type the reader dequantizes between them.
TEST(GgufQuantsTest, EveryTensorEqualsTheOracleBitForBit) {
  std::set<std::string> types, expected;
  expectEqualsTheOracle("model.gguf", types);
  expectEqualsTheOracle("quants.gguf", types);
  for (uint32_t code = 0; code < 64; ++code)
    if (mk::canDequantize(code))
      expected.insert(mk::ggmlTypeName(code));
  EXPECT_EQ(types, expected);
  EXPECT_EQ(expected.size(), 15u);
}

TEST(GgufQuantsTest, HalfWidensExactly) {
  EXPECT_EQ(mk::halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(mk::halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(mk::halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(mk::halfToFloat(0x0001), std::ldexp(1.0f, -24)); // the smallest subnormal
  EXPECT_EQ(mk::halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(mk::halfToFloat(0x0400), std::ldexp(1.0f, -14)); // the smallest normal
  EXPECT_EQ(std::bit_cast<uint32_t>(mk::halfToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(mk::halfToFloat(0x7c00), INFINITY);
  EXPECT_EQ(mk::halfToFloat(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(mk::halfToFloat(0x7c01)));
  EXPECT_EQ(mk::bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(mk::bfloat16ToFloat(0xff81)), 0xff810000u);
}

TEST(GgufQuantsTest, OneQ4_0BlockFollowsTheLayout) {
  // d = 0.5; byte j holds element j in its low nibble, element j + 16 in its high.
  std::vector<uint8_t> block(18, 0);
  block[0] = 0x00, block[1] = 0x38; // 0.5 in f16
  block[2] = 0xf0;                   // element 0: q 0, element 16: q 15
  block[3] = 0x19;                   // element 1: q 9, element 17: q 1
  std::vector<float> out(32);
  ASSERT_EQ(mk::dequantize(uint32_t(mk::GgmlType::Q4_0), block, out), "");
  EXPECT_EQ(out[0], -4.0f);
  EXPECT_EQ(out[16], 3.5f);
  EXPECT_EQ(out[1], 0.5f);
  EXPECT_EQ(out[17], -3.5f);
  EXPECT_EQ(out[2], -4.0f);
}

TEST(GgufQuantsTest, SizesAndTypesOutsideTheTableAreRefused) {
  std::vector<uint8_t> raw(34);
  std::vector<float> out(32);
  EXPECT_EQ(mk::dequantize(uint32_t(mk::GgmlType::Q8_0), raw, out), "");
  std::vector<float> tooMany(64);
  EXPECT_EQ(mk::dequantize(uint32_t(mk::GgmlType::Q8_0), raw, tooMany),
            "64 elements of Q8_0 take 68 bytes in whole blocks of 32, not 34");
  std::vector<float> partial(16);
  EXPECT_NE(mk::dequantize(uint32_t(mk::GgmlType::Q8_0), raw, partial), "");
  EXPECT_EQ(mk::dequantize(16, raw, out).rfind("ggml type IQ2_XXS cannot be dequantized yet", 0), 0u);
  EXPECT_EQ(mk::dequantize(99, raw, out).rfind("ggml type type 99 cannot", 0), 0u);
}

} // namespace

// Found by fuzz-gguf: an empty F32 tensor reached memcpy with a null
// pointer (undefined behaviour, which gguf.asan's UBSan reports).
TEST(GgufQuantsTest, AnEmptyTensorDequantizesToNothing) {
  for (mk::GgmlType type : {mk::GgmlType::F32, mk::GgmlType::F16, mk::GgmlType::Q8_0})
    EXPECT_EQ(mk::dequantize(uint32_t(type), std::span<const uint8_t>(), std::span<float>()), "");
}
