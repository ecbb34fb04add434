// readTokenizerFiles on the shapes HF checkpoints ship: a Unigram vocabulary
// (a list of [piece, score]), chat templates as a named list, EOS given by
// name or as a single id, sampling defaults only where the model samples.
#include "compiler/driver/TokenizerFiles.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace mk {
namespace {

class TokenizerFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    folder = std::filesystem::temp_directory_path() /
             ("mk-tokenizer-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
              "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
  }
  void TearDown() override { std::filesystem::remove_all(folder); }

  void write(const char *name, const std::string &text) {
    std::ofstream(folder / name) << text;
  }

  std::filesystem::path folder;
};

constexpr const char *kUnigram =
    R"({"model": {"type": "Unigram", "vocab": [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0], ["a", -1.5]]},
        "added_tokens": [{"id": 4, "content": "<end_of_turn>"}]})";

TEST_F(TokenizerFilesTest, UnigramVocabularyAndNamedTemplates) {
  write("tokenizer.json", kUnigram);
  write("tokenizer_config.json",
        R"({"eos_token": "<end_of_turn>", "bos_token": null,
            "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
  auto files = readTokenizerFiles(folder.string());
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_EQ(files->vocabSize, 5u);
  EXPECT_EQ(files->eosTokens, std::vector<int64_t>{4});
  EXPECT_FALSE(files->generation.bosToken.has_value());
  EXPECT_EQ(files->generation.chatTemplate, "D");
  EXPECT_FALSE(files->generation.temperature.has_value());
  EXPECT_EQ(files->tokenizerJson, kUnigram);
}

TEST_F(TokenizerFilesTest, GenerationConfigIdsWinAndGreedyHasNoSamplingDefaults) {
  write("tokenizer.json", kUnigram);
  write("tokenizer_config.json", R"({"eos_token": {"content": "</s>"}})");
  write("generation_config.json",
        R"({"eos_token_id": 4, "bos_token_id": 0, "temperature": 0.6, "top_p": 0.95})");
  auto files = readTokenizerFiles(folder.string());
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_EQ(files->eosTokens, std::vector<int64_t>{4});
  EXPECT_EQ(files->generation.bosToken, std::optional<int64_t>(0));
  // No do_sample: HF's generate is greedy, whatever the temperature says.
  EXPECT_FALSE(files->generation.temperature.has_value());
  EXPECT_FALSE(files->generation.topP.has_value());
}

TEST_F(TokenizerFilesTest, RefusalsNameTheFileAndTheKey) {
  auto message = [&]() {
    auto files = readTokenizerFiles(folder.string());
    return files ? std::string("accepted") : llvm::toString(files.takeError());
  };
  EXPECT_NE(message().find("no tokenizer.json in"), std::string::npos);
  write("tokenizer.json", R"({"version": "1.0"})");
  EXPECT_NE(message().find("has no \"model\" object"), std::string::npos);
  write("tokenizer.json", R"({"model": {"vocab": {"a": "zero"}}})");
  EXPECT_NE(message().find("model.vocab[\"a\"] is not a token id"), std::string::npos);
  write("tokenizer.json", kUnigram);
  write("generation_config.json", R"({"eos_token_id": "</s>"})");
  EXPECT_NE(message().find("eos_token_id is neither a token id nor a list of them"),
            std::string::npos);
  write("generation_config.json", R"({"eos_token_id": [1, "x"]})");
  EXPECT_NE(message().find("eos_token_id holds a value that is not a token id"), std::string::npos);
}

} // namespace
} // namespace mk
