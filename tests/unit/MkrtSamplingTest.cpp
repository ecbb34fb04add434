// libmkrt's sampling settings and streaming calls on the toy model's .mk
// file (CPU): settings refused by name, a seed's tokens the same through
// every call form, and the callback seeing each token and stopping the
// generation, the kept context ending after the token it stopped at.
#include "MkrtCpuSession.h"
#include "ToyArtifact.h"

#include "mkrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace mk {
namespace {

using test::generate;

// A session on the toy model's file.
struct Session : test::CpuSession {
  Session() : CpuSession(toy::writeToyModel("sampling.mk", {})) {}
};

mkrt_sampling sampled(uint64_t seed) {
  mkrt_sampling s;
  mkrt_sampling_init(&s);
  s.temperature = 1.2;
  s.top_p = 0.95;
  s.repetition_penalty = 1.2;
  s.seed = seed;
  return s;
}

struct Seen {
  std::vector<std::pair<int64_t, size_t>> tokens;
  size_t stopAfter = 0; // 0: never
  static int onToken(void *self, int64_t token, size_t index) {
    Seen *seen = static_cast<Seen *>(self);
    seen->tokens.push_back({token, index});
    return seen->stopAfter > 0 && index + 1 == seen->stopAfter;
  }
};

TEST(MkrtSampling, RefusesBadSettingsByName) {
  Session s;
  auto refusal = [&](mkrt_sampling settings) {
    EXPECT_EQ(mkrt_session_set_sampling(s.session, &settings), MKRT_ERROR_INVALID_ARGUMENT);
    return std::string(mkrt_last_error());
  };
  mkrt_sampling bad = sampled(1);
  bad.temperature = -0.5;
  EXPECT_NE(refusal(bad).find("temperature"), std::string::npos);
  bad = sampled(1);
  bad.top_k = -2;
  EXPECT_NE(refusal(bad).find("top_k -2 is negative"), std::string::npos);
  bad.top_k = 2000;
  EXPECT_NE(refusal(bad).find("top_k 2000"), std::string::npos);
  bad = sampled(1);
  bad.top_p = 0;
  EXPECT_NE(refusal(bad).find("top_p"), std::string::npos);
  bad.top_p = NAN;
  EXPECT_NE(refusal(bad).find("top_p"), std::string::npos);
  bad = sampled(1);
  bad.min_p = 1.5;
  EXPECT_NE(refusal(bad).find("min_p"), std::string::npos);
  bad = sampled(1);
  bad.repetition_penalty = -1;
  EXPECT_NE(refusal(bad).find("repetition_penalty"), std::string::npos);
  EXPECT_EQ(mkrt_session_set_sampling(nullptr, nullptr), MKRT_ERROR_INVALID_ARGUMENT);
  // Refused settings leave the session greedy, as it was.
  std::vector<int64_t> greedy = generate(s.session, {3, 17, 5}, 6);
  EXPECT_EQ(mkrt_session_set_sampling(s.session, nullptr), MKRT_OK);
  EXPECT_EQ(generate(s.session, {3, 17, 5}, 6), greedy);
}

TEST(MkrtSampling, ASeedGivesTheSameTokensStreamedContinuedOrNot) {
  Session s;
  std::vector<int64_t> prompt = {3, 17, 5};
  mkrt_sampling settings = sampled(42);
  ASSERT_EQ(mkrt_session_set_sampling(s.session, &settings), MKRT_OK);
  std::vector<int64_t> whole = generate(s.session, prompt, 8);
  ASSERT_EQ(whole.size(), 8u);
  EXPECT_EQ(generate(s.session, prompt, 8), whole);

  Seen seen;
  std::vector<int64_t> out(8);
  size_t produced = 0;
  ASSERT_EQ(mkrt_generate_stream(s.session, prompt.data(), prompt.size(), 8, Seen::onToken, &seen,
                                 out.data(), &produced, nullptr),
            MKRT_OK);
  EXPECT_EQ(out, whole);
  ASSERT_EQ(seen.tokens.size(), 8u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(seen.tokens[i], std::make_pair(whole[i], i));

  // Turn by turn: 3 tokens, then their last fed with 5 more.
  std::vector<int64_t> head(3), tail(5);
  ASSERT_EQ(mkrt_continue(s.session, prompt.data(), prompt.size(), 3, head.data(), &produced,
                          nullptr),
            MKRT_OK);
  ASSERT_EQ(mkrt_continue_stream(s.session, &head.back(), 1, 5, Seen::onToken, &seen,
                                 tail.data(), &produced, nullptr),
            MKRT_OK);
  head.insert(head.end(), tail.begin(), tail.end());
  EXPECT_EQ(head, whole);

  mkrt_sampling other = sampled(43);
  ASSERT_EQ(mkrt_session_set_sampling(s.session, &other), MKRT_OK);
  EXPECT_NE(generate(s.session, prompt, 8), whole);
}

TEST(MkrtSampling, TheCallbacksStopEndsTheCallAndTheKeptContext) {
  Session s;
  std::vector<int64_t> prompt = {3, 17, 5};
  std::vector<int64_t> whole = generate(s.session, prompt, 8);
  Seen seen;
  seen.stopAfter = 3;
  std::vector<int64_t> out(8);
  size_t produced = 0;
  mkrt_timing timing;
  ASSERT_EQ(mkrt_continue_stream(s.session, prompt.data(), prompt.size(), 8, Seen::onToken, &seen,
                                 out.data(), &produced, &timing),
            MKRT_OK);
  ASSERT_EQ(produced, 3u);
  EXPECT_EQ(std::vector<int64_t>(out.begin(), out.begin() + 3),
            std::vector<int64_t>(whole.begin(), whole.begin() + 3));
  EXPECT_EQ(timing.stopped_by_callback, 1);
  EXPECT_EQ(timing.stopped_at_eos, 0);
  EXPECT_EQ(timing.steps, 5); // the prompt's 3 steps and 2 generation steps
  EXPECT_EQ(mkrt_session_context_length(s.session), 5);
  // Carrying on from the last token gives the rest of the whole run.
  std::vector<int64_t> rest(5);
  ASSERT_EQ(mkrt_continue(s.session, &out[2], 1, 5, rest.data(), &produced, nullptr), MKRT_OK);
  EXPECT_EQ(rest, std::vector<int64_t>(whole.begin() + 3, whole.end()));

  EXPECT_EQ(mkrt_generate_stream(s.session, prompt.data(), prompt.size(), 8, nullptr, nullptr,
                                 out.data(), &produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mkrt_last_error()).find("callback is NULL"), std::string::npos);
}

} // namespace
} // namespace mk
