// The GGUF reader on a file gguf-py's GGUFWriter wrote: its header,
// metadata and tensors as the writer put them, lookups refused with the key
// and its type named, every damaged variant refused with a message naming
// what is wrong, and every prefix and many single-byte changes of the file
// refused or read without a read out of bounds (this suite also runs built
// with AddressSanitizer, as mk-gguf-tests-asan).
#include "frontends/gguf/GgufFile.h"

#include "GgufFixture.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace {

using mk::GgufFile;
using mk::testing::fileBytes;
using mk::testing::ggufFixturePath;

std::unique_ptr<GgufFile> openModel() {
  std::string error;
  auto file = GgufFile::open(ggufFixturePath("model.gguf"), error);
  EXPECT_TRUE(file) << error;
  return file;
}

TEST(GgufFileTest, HeaderAndHyperparametersAreWhatTheWriterWrote) {
  auto file = openModel();
  ASSERT_TRUE(file);
  EXPECT_EQ(file->version(), 3u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->dataOffset() % 32, 0u);
  std::string_view architecture;
  ASSERT_EQ(file->string("general.architecture", architecture), "");
  EXPECT_EQ(architecture, "llama");
  uint32_t value = 0;
  ASSERT_EQ(file->uint32("llama.embedding_length", value), "");
  EXPECT_EQ(value, 256u);
  ASSERT_EQ(file->uint32("llama.attention.head_count_kv", value), "");
  EXPECT_EQ(value, 2u);
  float base = 0;
  ASSERT_EQ(file->float32("llama.rope.freq_base", base), "");
  EXPECT_EQ(base, 500000.0f);
  float epsilon = 0;
  ASSERT_EQ(file->float32("llama.attention.layer_norm_rms_epsilon", epsilon), "");
  EXPECT_EQ(epsilon, 1e-5f);
}

TEST(GgufFileTest, TokenizerArraysAreRead) {
  auto file = openModel();
  ASSERT_TRUE(file);
  std::vector<std::string_view> tokens;
  ASSERT_EQ(file->stringArray("tokenizer.ggml.tokens", tokens), "");
  ASSERT_EQ(tokens.size(), 32u);
  EXPECT_EQ(tokens[0], "<t0>");
  EXPECT_EQ(tokens[31], "<t31>");
  uint64_t count = 0;
  ASSERT_EQ(file->arrayLength("tokenizer.ggml.scores", count), "");
  EXPECT_EQ(count, 32u);
  const mk::GgufValue *scores = file->find("tokenizer.ggml.scores");
  ASSERT_TRUE(scores);
  EXPECT_EQ(scores->elementType, mk::GgufValueType::Float32);
  EXPECT_EQ(scores->elements.size(), 32u * 4);
}

TEST(GgufFileTest, LookupsNameTheKeyAndItsActualType) {
  auto file = openModel();
  ASSERT_TRUE(file);
  uint32_t number = 0;
  EXPECT_EQ(file->uint32("general.name", number),
            "metadata key 'general.name' is string, not uint32");
  EXPECT_EQ(file->uint32("llama.no_such_key", number),
            "metadata key 'llama.no_such_key' is missing");
  float real = 0;
  EXPECT_EQ(file->float32("llama.block_count", real),
            "metadata key 'llama.block_count' is uint32, not float32");
  std::vector<std::string_view> strings;
  EXPECT_EQ(file->stringArray("tokenizer.ggml.scores", strings),
            "metadata key 'tokenizer.ggml.scores' is an array of float32, not of string");
  EXPECT_EQ(file->stringArray("general.name", strings),
            "metadata key 'general.name' is string, not array");
}

TEST(GgufFileTest, TensorsHaveTheirTypesShapesAndBytes) {
  auto file = openModel();
  ASSERT_TRUE(file);
  ASSERT_EQ(file->tensors().size(), 9u);
  const mk::GgufTensor *embedding = file->findTensor("token_embd.weight");
  ASSERT_TRUE(embedding);
  EXPECT_STREQ(embedding->type->name, "Q4_K");
  EXPECT_EQ(embedding->dims, (std::vector<uint64_t>{256, 32}));
  EXPECT_EQ(embedding->bytes, 32u * 144);
  const mk::GgufTensor *down = file->findTensor("blk.0.ffn_down.weight");
  ASSERT_TRUE(down);
  EXPECT_STREQ(down->type->name, "Q6_K");
  EXPECT_EQ(down->dims, (std::vector<uint64_t>{512, 256}));
  EXPECT_EQ(down->bytes, 512u * 256 / 256 * 210);
  auto bytes = fileBytes(ggufFixturePath("model.gguf"));
  for (const mk::GgufTensor &tensor : file->tensors()) {
    EXPECT_EQ(tensor.data.size(), tensor.bytes) << tensor.name;
    EXPECT_EQ(0, std::memcmp(tensor.data.data(), bytes.data() + file->dataOffset() + tensor.offset,
                             tensor.bytes))
        << tensor.name;
  }
  EXPECT_FALSE(file->findTensor("no.such.tensor"));
}

struct Corruption {
  std::string name;
  std::vector<std::string> texts;
};

std::vector<Corruption> corruptions() {
  std::vector<Corruption> list;
  std::ifstream tsv(ggufFixturePath("corrupt.tsv"));
  for (std::string line; std::getline(tsv, line);) {
    std::istringstream fields(line);
    Corruption corruption;
    std::getline(fields, corruption.name, '\t');
    for (std::string text; std::getline(fields, text, '\t');)
      corruption.texts.push_back(text);
    list.push_back(corruption);
  }
  return list;
}

TEST(GgufFileTest, EveryDamagedFileIsRefusedNamingWhatIsWrong) {
  std::vector<Corruption> list = corruptions();
  ASSERT_GE(list.size(), 30u) << "corrupt.tsv is missing or short";
  for (const Corruption &corruption : list) {
    std::string path = ggufFixturePath("corrupt/" + corruption.name + ".gguf");
    std::string error;
    EXPECT_FALSE(GgufFile::open(path, error)) << corruption.name;
    EXPECT_EQ(error.rfind("'" + path + "': ", 0), 0u) << error;
    for (const std::string &text : corruption.texts)
      EXPECT_NE(error.find(text), std::string::npos)
          << corruption.name << ": '" << error << "' does not say '" << text << "'";
    // The same bytes, seen in memory, give the same reason.
    auto bytes = fileBytes(path);
    std::string viewError;
    EXPECT_FALSE(GgufFile::view(bytes, viewError));
    EXPECT_EQ("'" + path + "': " + viewError, error);
  }
}

TEST(GgufFileTest, MissingFileAndDirectoryAreRefused) {
  std::string error;
  EXPECT_FALSE(GgufFile::open(ggufFixturePath("no-such.gguf"), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_FALSE(GgufFile::open(ggufFixturePath("corrupt"), error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
}

// A copy of exactly `size` bytes on the heap, so that a read past its end is
// one AddressSanitizer sees.
std::unique_ptr<GgufFile> viewCopy(const std::vector<uint8_t> &bytes, size_t size,
                                   std::vector<uint8_t> &copy, std::string &error) {
  copy.assign(bytes.begin(), bytes.begin() + size);
  copy.shrink_to_fit();
  return GgufFile::view(copy, error);
}

TEST(GgufFileTest, EveryPrefixIsRefused) {
  auto bytes = fileBytes(ggufFixturePath("model.gguf"));
  auto file = openModel();
  ASSERT_TRUE(file);
  // Every byte through the header and the first of the data, then a stride.
  for (size_t size = 0; size < bytes.size();
       size += size < file->dataOffset() + 256 ? 1 : 251) {
    std::vector<uint8_t> copy;
    std::string error;
    EXPECT_FALSE(viewCopy(bytes, size, copy, error)) << "prefix of " << size << " bytes";
    EXPECT_FALSE(error.empty());
  }
}

TEST(GgufFileTest, ChangedBytesAreRefusedOrReadInBounds) {
  auto bytes = fileBytes(ggufFixturePath("model.gguf"));
  auto file = openModel();
  ASSERT_TRUE(file);
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> position(0, file->dataOffset() - 1);
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> changed = bytes;
    size_t at = position(random);
    changed[at] ^= uint8_t(1u << (random() % 8));
    if (trial % 3 == 0) // sometimes a whole byte of 0xff, as a large length or count
      changed[at] = 0xff;
    std::string error;
    auto parsed = GgufFile::view(changed, error);
    if (!parsed) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    for (const mk::GgufTensor &tensor : parsed->tensors()) {
      EXPECT_GE(tensor.data.data(), changed.data());
      EXPECT_LE(tensor.data.data() + tensor.data.size(), changed.data() + changed.size());
    }
  }
}

} // namespace
