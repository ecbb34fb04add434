// The llama-family hyperparameters and tensor layout read from the reader's
// fixture (a llama file gguf-py wrote), and the undoing of llama.cpp's q/k
// row permutation on a case small enough to check by hand.
#include "frontends/gguf/GgufDecoder.h"
#include "frontends/gguf/GgufWeights.h"

#include "GgufFixture.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

TEST(GgufDecoderTest, HyperparametersAreTheWritersWithDefaultsFilledIn) {
  std::string error;
  auto file = mk::GgufFile::open(mk::testing::ggufFixturePath("model.gguf"), error);
  ASSERT_TRUE(file) << error;
  mk::GgufDecoderConfig config;
  ASSERT_EQ(mk::readDecoderConfig(*file, config), "");
  EXPECT_EQ(config.architecture, "llama");
  EXPECT_EQ(config.hidden, 256);
  EXPECT_EQ(config.layers, 1);
  EXPECT_EQ(config.heads, 4);
  EXPECT_EQ(config.kvHeads, 2);
  EXPECT_EQ(config.headDim, 64); // no key_length: hidden / heads
  EXPECT_EQ(config.ffn, 512);
  EXPECT_EQ(config.vocab, 32);   // token_embd.weight's rows
  EXPECT_EQ(config.contextLength, 2048);
  EXPECT_FLOAT_EQ(config.rmsEps, 1e-5f);
  EXPECT_TRUE(config.permutedQK);
  EXPECT_TRUE(config.tied); // no output.weight
  EXPECT_FALSE(config.qkvBias);
  EXPECT_FALSE(config.qkNorm);
  ASSERT_EQ(config.rotaryDim, 64);
  ASSERT_EQ(config.invFreq.size(), 32u);
  ASSERT_TRUE(config.ropeTheta);
  EXPECT_EQ(*config.ropeTheta, 500000.0);
  EXPECT_EQ(config.invFreq[0], 1.0f);
  EXPECT_NEAR(config.invFreq[1], std::pow(500000.0, -2.0 / 64), 1e-7);

  mk::GgufSpecialTokens tokens;
  ASSERT_EQ(mk::readSpecialTokens(*file, tokens), "");
  EXPECT_EQ(tokens.eosTokens, std::vector<int64_t>{2});
  EXPECT_EQ(tokens.bosToken, 1);
  EXPECT_EQ(tokens.chatTemplate, "");
}

TEST(GgufDecoderTest, UnpermutingRestoresRotateHalfOrderPerHead) {
  // Two heads of 4 rows, 2 columns. HF's head rows are (x0, x1 | y0, y1),
  // rotated in pairs (x_i, y_i); the converter wrote them as x0, y0, x1, y1.
  std::vector<float> rows = {
      10, 11, 30, 31, 20, 21, 40, 41, // head 0: x0 y0 x1 y1
      50, 51, 70, 71, 60, 61, 80, 81, // head 1
  };
  mk::unpermuteRotaryRows(rows, 2, 4, 2);
  std::vector<float> expected = {10, 11, 20, 21, 30, 31, 40, 41,
                                 50, 51, 60, 61, 70, 71, 80, 81};
  EXPECT_EQ(rows, expected);
}

TEST(GgufDecoderTest, TensorsOfOtherDimsAreRefusedByName) {
  std::string error;
  auto file = mk::GgufFile::open(mk::testing::ggufFixturePath("model.gguf"), error);
  ASSERT_TRUE(file) << error;
  mk::GgufMatrix matrix;
  std::string refused = mk::readGgufTensor(*file, "blk.0.attn_k.weight", {128, 256}, "k_proj", matrix);
  EXPECT_NE(refused.find("tensor 'blk.0.attn_k.weight' (info at offset "), std::string::npos) << refused;
  EXPECT_NE(refused.find("has dims [256, 128] (ne[0] first), expected [128, 256] for k_proj"),
            std::string::npos) << refused;
  EXPECT_NE(mk::readGgufTensor(*file, "nope", {1}, "a test", matrix).find("tensor 'nope' (a test) is missing"),
            std::string::npos);
  ASSERT_EQ(mk::readGgufTensor(*file, "blk.0.attn_k.weight", {256, 128}, "k_proj", matrix), "");
  EXPECT_EQ(matrix.values.size(), 256u * 128u);
}

} // namespace
