// libmkrt on a .mk holding steps of several rows (the toy model with a
// prefill chunk of 3 and a batch of 2, toy::makeRows): prompts and logits go
// through the prefill chunk with the tokens and bits of decode steps, and
// mkrt_generate_batch gives each sequence what mkrt_generate gives it alone.
#include "MkrtCpuSession.h"
#include "ToyArtifact.h"

#include "mkrt.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mk {
namespace {

std::vector<ScheduledGraph> toyRowSteps() {
  toy::ToyModel chunk = toy::buildToyModel(), batch = toy::buildToyModel();
  toy::makeRows(chunk.graph, 3, 1);
  toy::makeRows(batch.graph, 2, 2);
  return {{chunk.graph, chunk.schedule}, {batch.graph, batch.schedule}};
}

std::string withRows() {
  return toy::writeToyModel("rows.mk", {.eosTokens = {}, .rowSteps = toyRowSteps()});
}
std::string plain() { return toy::writeToyModel("plain.mk"); }

std::vector<float> logitsOf(mkrt_session *session, const std::vector<int64_t> &tokens) {
  std::vector<float> logits(tokens.size() * toy::kVocab);
  EXPECT_EQ(mkrt_eval_logits(session, tokens.data(), tokens.size(), logits.data()), MKRT_OK)
      << mkrt_last_error();
  return logits;
}

TEST(MkrtRowSteps, PrefillGivesTheTokensAndBitsOfDecodeSteps) {
  test::CpuSession rows(withRows()), alone(plain());
  std::vector<int64_t> prompt = {3, 17, 5, 36, 0, 22, 9};
  EXPECT_EQ(test::generate(rows.session, prompt, 4), test::generate(alone.session, prompt, 4));
  std::vector<float> a = logitsOf(rows.session, prompt), b = logitsOf(alone.session, prompt);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(MkrtRowSteps, EachSequenceOfABatchGetsItsOwnTokens) {
  test::CpuSession rows(withRows()), alone(plain());
  mkrt_sampling sampling;
  mkrt_sampling_init(&sampling);
  sampling.temperature = 0.8;
  sampling.repetition_penalty = 1.2;
  sampling.seed = 99;
  const mkrt_sampling *greedy = nullptr, *sampled = &sampling;
  for (const mkrt_sampling *settings : {greedy, sampled}) {
    ASSERT_EQ(mkrt_session_set_sampling(rows.session, settings), MKRT_OK);
    ASSERT_EQ(mkrt_session_set_sampling(alone.session, settings), MKRT_OK);
    std::vector<std::vector<int64_t>> prompts = {{3, 17, 5}, {36}};
    const int64_t *starts[] = {prompts[0].data(), prompts[1].data()};
    size_t lengths[] = {3, 1}, produced[2] = {};
    std::vector<int64_t> tokens(2 * 5);
    mkrt_timing timing;
    ASSERT_EQ(mkrt_generate_batch(rows.session, starts, lengths, 2, 5, tokens.data(), produced,
                                  &timing),
              MKRT_OK)
        << mkrt_last_error();
    for (size_t s = 0; s < 2; ++s) {
      std::vector<int64_t> mine(tokens.begin() + s * 5, tokens.begin() + s * 5 + produced[s]);
      EXPECT_EQ(mine, test::generate(alone.session, prompts[s], 5)) << "sequence " << s;
    }
    // The launch's steps: the longest prompt and the generation after it.
    EXPECT_EQ(timing.steps, 3 + 5 - 1);
    EXPECT_EQ(timing.num_step_ms, 7u);
  }
}

TEST(MkrtRowSteps, NamesTheBatchSizesTheFileHolds) {
  // The toy's batch of 2 (its prefill chunk of 3 holds one sequence).
  test::CpuSession rows(withRows()), alone(plain());
  int64_t sizes[4] = {-1, -1, -1, -1};
  size_t count = 99;
  ASSERT_EQ(mkrt_model_batch_sizes(rows.model, sizes, 4, &count), MKRT_OK);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(sizes[0], 2);
  EXPECT_EQ(sizes[1], -1);
  ASSERT_EQ(mkrt_model_batch_sizes(rows.model, nullptr, 0, &count), MKRT_OK);
  EXPECT_EQ(count, 1u); // the count alone
  ASSERT_EQ(mkrt_model_batch_sizes(alone.model, sizes, 4, &count), MKRT_OK);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(mkrt_model_batch_sizes(rows.model, nullptr, 4, &count), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_model_batch_sizes(rows.model, sizes, 4, nullptr), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_model_batch_sizes(nullptr, sizes, 4, &count), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(mkrt_last_error(), "NULL"), nullptr);
}

TEST(MkrtRowSteps, RefusesWhatNoBatchHolds) {
  test::CpuSession rows(withRows()), alone(plain());
  int64_t token = 1;
  const int64_t *starts[] = {&token, &token, &token};
  size_t lengths[] = {1, 1, 1}, produced[3];
  int64_t out[6];
  EXPECT_EQ(mkrt_generate_batch(rows.session, starts, lengths, 3, 2, out, produced, nullptr),
            MKRT_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(mkrt_last_error()).find("no batch of 3 or more sequences"),
            std::string::npos)
      << mkrt_last_error();
  EXPECT_EQ(mkrt_generate_batch(alone.session, starts, lengths, 2, 2, out, produced, nullptr),
            MKRT_ERROR_UNSUPPORTED);
  size_t empty[] = {1, 0};
  EXPECT_EQ(mkrt_generate_batch(rows.session, starts, empty, 2, 2, out, produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  int64_t outside = toy::kVocab;
  const int64_t *bad[] = {&token, &outside};
  EXPECT_EQ(mkrt_generate_batch(rows.session, bad, lengths, 2, 2, out, produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_generate_batch(rows.session, nullptr, lengths, 2, 2, out, produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_generate_batch(rows.session, starts, lengths, 2, toy::kMaxContext + 1, out,
                                produced, nullptr),
            MKRT_ERROR_CONTEXT_FULL);
}

} // namespace
} // namespace mk
