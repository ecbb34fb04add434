// libmkrt's C API on the toy model's .mk file: the CPU session's logits are
// the kernels' with bf16 weights, generation is greedy over those logits and
// stops at EOS, and every misuse gets a status and a message.
#include "ToyArtifact.h"

#include "mkrt.h"
#include "runtime/format/ArtifactFile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace mk {
namespace {

std::string writeToyModel(ArtifactOptions options = {}) {
  toy::ToyModel model = toy::buildToyModel(4);
  auto built = toy::buildToyArtifact(model, std::move(options));
  std::string path = toy::temporaryPath("model.mk");
  std::string error;
  if (!writeArtifact(path, built->artifact, error))
    throw std::runtime_error(error);
  return path;
}

struct Session {
  mkrt_model *model = nullptr;
  mkrt_session *session = nullptr;
  explicit Session(const std::string &path, const char *device = "cpu", int64_t maxContext = 0) {
    char error[512];
    EXPECT_EQ(mkrt_open(path.c_str(), &model, error, sizeof error), MKRT_OK) << error;
    EXPECT_EQ(mkrt_session_create(model, device, maxContext, &session, error, sizeof error),
              MKRT_OK)
        << error;
  }
  ~Session() {
    mkrt_session_destroy(session);
    mkrt_close(model);
  }
};

std::vector<float> evalLogits(mkrt_session *session, const std::vector<int64_t> &tokens) {
  std::vector<float> logits(tokens.size() * toy::kVocab);
  EXPECT_EQ(mkrt_eval_logits(session, tokens.data(), tokens.size(), logits.data()), MKRT_OK)
      << mkrt_last_error();
  return logits;
}

int64_t argmax(const std::vector<float> &logits, size_t row) {
  auto begin = logits.begin() + row * toy::kVocab;
  return std::max_element(begin, begin + toy::kVocab) - begin;
}

TEST(Mkrt, DescribesTheModel) {
  Session s(writeToyModel({.eosTokens = {4}}));
  mkrt_info info;
  ASSERT_EQ(mkrt_model_info(s.model, &info), MKRT_OK);
  EXPECT_EQ(info.num_layers, toy::kLayers);
  EXPECT_EQ(info.vocab, toy::kVocab);
  EXPECT_EQ(info.max_context, toy::kMaxContext);
  EXPECT_EQ(info.num_sms, 4u);
  EXPECT_EQ(info.has_kernel, 0);
  EXPECT_STREQ(info.target_arch, "sm_90a");
  ASSERT_EQ(info.num_eos_tokens, 1u);
  EXPECT_EQ(info.eos_tokens[0], 4);
  EXPECT_EQ(std::string(mkrt_session_device(s.session)).rfind("cpu", 0), 0u);
}

TEST(Mkrt, TeacherForcedLogitsAreTheKernelsWithBf16Weights) {
  toy::ToyModel model = toy::buildToyModel(4);
  Session s(writeToyModel());
  std::vector<int64_t> tokens = {3, 17, 5, 36, 0};
  std::vector<float> logits = evalLogits(s.session, tokens);
  WeightTable rounded = toy::roundedWeights(model.weights);
  toy::ToyReference reference(rounded);
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> expected = reference.step(tokens[t]);
    for (int64_t i = 0; i < toy::kVocab; ++i)
      EXPECT_LE(std::fabs(logits[t * toy::kVocab + i] - expected[i]),
                1e-5f * std::max(1.0f, std::fabs(expected[i])));
  }
  // Every call starts a new context: the same logits again.
  EXPECT_EQ(evalLogits(s.session, tokens), logits);
}

TEST(Mkrt, GeneratesGreedilyAndStopsAtEos) {
  std::string path = writeToyModel();
  std::vector<int64_t> prompt = {3, 17, 5}, generated(6);
  size_t produced = 0;
  {
    Session s(path);
    mkrt_timing timing;
    ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), generated.size(),
                            generated.data(), &produced, &timing),
              MKRT_OK)
        << mkrt_last_error();
    ASSERT_EQ(produced, generated.size());
    EXPECT_EQ(timing.steps, 8);
    EXPECT_EQ(timing.stopped_at_eos, 0);
    EXPECT_GT(timing.total_ms, 0);

    std::vector<int64_t> forced = prompt;
    forced.insert(forced.end(), generated.begin(), generated.end() - 1);
    std::vector<float> logits = evalLogits(s.session, forced);
    for (size_t i = 0; i < generated.size(); ++i)
      EXPECT_EQ(generated[i], argmax(logits, prompt.size() - 1 + i)) << "token " << i;
  }

  Session s(writeToyModel({.eosTokens = {generated[2]}}));
  std::vector<int64_t> stopped(6);
  mkrt_timing timing;
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), stopped.size(), stopped.data(),
                          &produced, &timing),
            MKRT_OK);
  size_t first = std::find(generated.begin(), generated.end(), generated[2]) - generated.begin();
  EXPECT_EQ(produced, first + 1);
  EXPECT_EQ(timing.stopped_at_eos, 1);
  EXPECT_TRUE(std::equal(stopped.begin(), stopped.begin() + produced, generated.begin()));
}

TEST(Mkrt, TheGpuIsUnavailableWithoutAKernel) {
  std::string path = writeToyModel();
  mkrt_model *model = nullptr;
  char error[512];
  ASSERT_EQ(mkrt_open(path.c_str(), &model, error, sizeof error), MKRT_OK);
  mkrt_session *session = nullptr;
  EXPECT_EQ(mkrt_session_create(model, "gpu", 0, &session, error, sizeof error),
            MKRT_ERROR_NO_DEVICE);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(std::string(error).rfind("device gpu is unavailable: ", 0), 0u) << error;
  EXPECT_STREQ(mkrt_last_error(), error);

  ASSERT_EQ(mkrt_session_create(model, "auto", 0, &session, error, sizeof error), MKRT_OK) << error;
  EXPECT_EQ(std::string(mkrt_session_device(session)).rfind("cpu", 0), 0u);
  mkrt_session_destroy(session);
  mkrt_close(model);
}

TEST(Mkrt, RefusesMisuseWithAStatusAndAMessage) {
  char error[512];
  mkrt_model *model = nullptr;
  EXPECT_EQ(mkrt_open(toy::temporaryPath("absent.mk").c_str(), &model, error, sizeof error),
            MKRT_ERROR_INVALID_MODEL);
  EXPECT_EQ(model, nullptr);
  EXPECT_NE(std::string(error).find("cannot open"), std::string::npos) << error;
  EXPECT_EQ(mkrt_open(nullptr, &model, nullptr, 0), MKRT_ERROR_INVALID_ARGUMENT);

  std::string path = writeToyModel();
  ASSERT_EQ(mkrt_open(path.c_str(), &model, error, sizeof error), MKRT_OK);
  mkrt_session *session = nullptr;
  EXPECT_EQ(mkrt_session_create(model, "tpu", 0, &session, error, sizeof error),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(error).find("unknown device 'tpu'"), std::string::npos) << error;
  EXPECT_EQ(mkrt_session_create(model, "cpu", toy::kMaxContext + 1, &session, error, sizeof error),
            MKRT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(mkrt_session_create(model, "cpu", 4, &session, error, sizeof error), MKRT_OK);

  std::vector<int64_t> tokens = {1, 2, 3, 4, 5}, out(8);
  std::vector<float> logits(tokens.size() * toy::kVocab);
  size_t produced = 0;
  EXPECT_EQ(mkrt_eval_logits(session, tokens.data(), 5, logits.data()), MKRT_ERROR_CONTEXT_FULL);
  EXPECT_NE(std::string(mkrt_last_error()).find("5 positions pass the session's max context of 4"),
            std::string::npos)
      << mkrt_last_error();
  EXPECT_EQ(mkrt_generate(session, tokens.data(), 2, 4, out.data(), &produced, nullptr),
            MKRT_ERROR_CONTEXT_FULL);
  EXPECT_EQ(mkrt_generate(session, tokens.data(), 2, 3, out.data(), &produced, nullptr), MKRT_OK)
      << mkrt_last_error();
  EXPECT_STREQ(mkrt_last_error(), "");
  tokens[1] = toy::kVocab;
  EXPECT_EQ(mkrt_eval_logits(session, tokens.data(), 2, logits.data()),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mkrt_last_error()).find("token 37 (at index 1) is outside the vocabulary"),
            std::string::npos);
  EXPECT_EQ(mkrt_generate(session, tokens.data(), 0, 3, out.data(), &produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  mkrt_session_destroy(session);
  mkrt_close(model);
}

} // namespace
} // namespace mk
