// What libmkrt gives a text front end (the Python package python/mkrt): the
// model's tokenizer and generation facts, and a context kept between calls
// (mkrt_continue) that gives the tokens of one fresh generation over the
// whole conversation.
#include "MkrtCpuSession.h"
#include "ToyArtifact.h"

#include "mkrt.h"
#include "runtime/format/ArtifactFile.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mk {
namespace {

using Session = test::CpuSession;
using test::generate;

std::string writeToyModel(ArtifactOptions options = {}) {
  return toy::writeToyModel("conversation.mk", std::move(options));
}

std::vector<int64_t> carryOn(mkrt_session *session, const std::vector<int64_t> &tokens,
                             size_t n) {
  std::vector<int64_t> out(n);
  size_t produced = 0;
  EXPECT_EQ(mkrt_continue(session, tokens.data(), tokens.size(), n, out.data(), &produced,
                          nullptr),
            MKRT_OK)
      << mkrt_last_error();
  out.resize(produced);
  return out;
}

std::vector<int64_t> join(std::vector<int64_t> a, const std::vector<int64_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(MkrtGenerationInfo, GivesTheTokenizerAndTheGenerationFacts) {
  GenerationFacts facts;
  facts.bosToken = 5;
  facts.chatTemplate = "{{ messages[0]['content'] }}";
  facts.temperature = 0.5f;
  facts.topK = 40;
  facts.tokenizerSource = "/models/toy";
  std::string json = "{\"version\": \"1.0\", \"model\": {}}";
  Session s(writeToyModel({.eosTokens = {4, 9}, .generation = facts, .tokenizerJson = json}));
  mkrt_generation_info info;
  ASSERT_EQ(mkrt_model_generation_info(s.model, &info), MKRT_OK);
  ASSERT_EQ(info.tokenizer_json_size, json.size());
  EXPECT_EQ(std::string(info.tokenizer_json, info.tokenizer_json_size), json);
  EXPECT_EQ(info.tokenizer_json[json.size()], '\0');
  EXPECT_EQ(info.has_bos, 1);
  EXPECT_EQ(info.bos_token, 5);
  EXPECT_STREQ(info.chat_template, "{{ messages[0]['content'] }}");
  EXPECT_STREQ(info.tokenizer_source, "/models/toy");
  EXPECT_EQ(info.has_temperature, 1);
  EXPECT_FLOAT_EQ(info.temperature, 0.5);
  EXPECT_EQ(info.has_top_k, 1);
  EXPECT_EQ(info.top_k, 40);
  EXPECT_EQ(info.has_top_p, 0);
  mkrt_info model;
  ASSERT_EQ(mkrt_model_info(s.model, &model), MKRT_OK);
  EXPECT_EQ(model.vocab, toy::kVocab);
  ASSERT_EQ(model.num_eos_tokens, 2u);
}

TEST(MkrtGenerationInfo, SaysSoWhenTheFileHasNoTokenizer) {
  Session s(writeToyModel());
  mkrt_generation_info info;
  ASSERT_EQ(mkrt_model_generation_info(s.model, &info), MKRT_OK);
  EXPECT_EQ(info.tokenizer_json_size, 0u);
  EXPECT_STREQ(info.tokenizer_json, "");
  EXPECT_EQ(info.has_bos, 0);
  EXPECT_EQ(info.bos_token, -1);
  EXPECT_STREQ(info.chat_template, "");
  EXPECT_EQ(mkrt_model_generation_info(nullptr, &info), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(mkrt_last_error(), "NULL"), nullptr);
  EXPECT_EQ(mkrt_model_generation_info(s.model, nullptr), MKRT_ERROR_INVALID_ARGUMENT);
}

// Two turns fed one after the other, each only its new tokens, give what one
// fresh generation over the whole conversation gives.
TEST(MkrtContinue, ASecondTurnEqualsAFreshRunOverTheWholeConversation) {
  Session s(writeToyModel());
  std::vector<int64_t> first = {3, 17, 5};
  std::vector<int64_t> reply = carryOn(s.session, first, 3);
  ASSERT_EQ(reply.size(), 3u);
  EXPECT_EQ(reply, generate(s.session, first, 3)); // the first turn alone, fresh
  // mkrt_generate started a new context: the kept one is gone.
  EXPECT_EQ(mkrt_session_context_length(s.session), 0);

  reply = carryOn(s.session, first, 3);
  // The last generated token was returned, not fed.
  EXPECT_EQ(mkrt_session_context_length(s.session), 5);
  std::vector<int64_t> second = {reply.back(), 22, 8};
  std::vector<int64_t> answer = carryOn(s.session, second, 4);
  EXPECT_EQ(mkrt_session_context_length(s.session), 11);

  std::vector<int64_t> whole = join(join(first, {reply.begin(), reply.end() - 1}), second);
  EXPECT_EQ(answer, generate(s.session, whole, 4));
}

// Feeding alone (n_new 0), then generating, is the same context; a context
// too full is refused and kept; rewinding forgets the turn after it.
TEST(MkrtContinue, FeedsRefusesAndRewinds) {
  Session s(writeToyModel());
  std::vector<int64_t> first = {3, 17, 5};
  size_t produced = 7;
  ASSERT_EQ(mkrt_continue(s.session, first.data(), first.size(), 0, nullptr, &produced, nullptr),
            MKRT_OK)
      << mkrt_last_error();
  EXPECT_EQ(produced, 0u);
  EXPECT_EQ(mkrt_session_context_length(s.session), 3);
  std::vector<int64_t> more = carryOn(s.session, {9}, 2);
  EXPECT_EQ(mkrt_session_context_length(s.session), 5);

  std::vector<int64_t> tooMany(8, 1), out(4);
  EXPECT_EQ(mkrt_continue(s.session, tooMany.data(), tooMany.size(), 1, out.data(), &produced,
                          nullptr),
            MKRT_ERROR_CONTEXT_FULL);
  EXPECT_NE(std::strstr(mkrt_last_error(), "context length 5 + 8 positions pass"), nullptr)
      << mkrt_last_error();
  EXPECT_EQ(mkrt_session_context_length(s.session), 5);
  std::vector<int64_t> bad = {toy::kVocab};
  EXPECT_EQ(mkrt_continue(s.session, bad.data(), 1, 1, out.data(), &produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_session_context_length(s.session), 5);

  // Back to the first turn, then another second turn: as if the first
  // second turn never happened.
  ASSERT_EQ(mkrt_session_rewind(s.session, 3), MKRT_OK);
  std::vector<int64_t> other = carryOn(s.session, {11, 2}, 3);
  EXPECT_EQ(other, generate(s.session, {3, 17, 5, 11, 2}, 3));

  EXPECT_EQ(mkrt_session_rewind(s.session, 1), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(mkrt_last_error(), "holds 0 positions"), nullptr) << mkrt_last_error();
  EXPECT_EQ(mkrt_session_rewind(nullptr, 0), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_session_context_length(nullptr), 0);
  EXPECT_EQ(mkrt_continue(s.session, first.data(), 0, 1, out.data(), &produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_continue(nullptr, first.data(), 1, 1, out.data(), &produced, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
}

// Teacher-forced logits after a kept context equal those of a fresh run:
// the turn's first token is fed at the right position over the right cache.
TEST(MkrtContinue, KeepsTheCacheEvenWhereTheCpuRunsAFreshExecutorOtherwise) {
  Session s(writeToyModel());
  std::vector<int64_t> first = {3, 17, 5, 30};
  std::vector<int64_t> reply = carryOn(s.session, first, 1);
  ASSERT_EQ(reply.size(), 1u);
  std::vector<int64_t> next = carryOn(s.session, {reply[0], 12}, 2);
  std::vector<int64_t> fresh = generate(s.session, {3, 17, 5, 30, reply[0], 12}, 2);
  EXPECT_EQ(next, fresh);
}

std::vector<float> logitsOf(mkrt_session *session, const std::vector<int64_t> &tokens,
                            bool kept) {
  std::vector<float> logits(tokens.size() * toy::kVocab);
  EXPECT_EQ((kept ? mkrt_continue_logits : mkrt_eval_logits)(session, tokens.data(),
                                                             tokens.size(), logits.data()),
            MKRT_OK)
      << mkrt_last_error();
  return logits;
}

// Logits in the kept context, turn by turn, are the rows of one fresh
// teacher-forced run over the whole, bit for bit; they mix with
// mkrt_continue in one context.
TEST(MkrtContinue, LogitsOfTheKeptContextEqualAFreshRunsRows) {
  Session s(writeToyModel());
  std::vector<int64_t> whole = {3, 17, 5, 36, 0, 22, 9};
  std::vector<float> fresh = logitsOf(s.session, whole, false);
  std::vector<float> first = logitsOf(s.session, {3, 17, 5}, true);
  EXPECT_EQ(mkrt_session_context_length(s.session), 3);
  std::vector<float> second = logitsOf(s.session, {36}, true);
  std::vector<float> third = logitsOf(s.session, {0, 22, 9}, true);
  EXPECT_EQ(mkrt_session_context_length(s.session), 7);
  std::vector<float> joined = first;
  joined.insert(joined.end(), second.begin(), second.end());
  joined.insert(joined.end(), third.begin(), third.end());
  EXPECT_EQ(joined, fresh);

  std::vector<int64_t> next = carryOn(s.session, {4}, 2);
  EXPECT_EQ(next, generate(s.session, join(whole, {4}), 2));

  std::vector<float> room(20 * toy::kVocab);
  std::vector<int64_t> tooMany(20, 1);
  ASSERT_EQ(mkrt_session_rewind(s.session, 0), MKRT_OK);
  EXPECT_EQ(mkrt_continue_logits(s.session, tooMany.data(), 13, room.data()),
            MKRT_ERROR_CONTEXT_FULL);
  EXPECT_EQ(mkrt_continue_logits(s.session, tooMany.data(), 0, room.data()),
            MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_continue_logits(s.session, tooMany.data(), 1, nullptr),
            MKRT_ERROR_INVALID_ARGUMENT);
}

} // namespace
} // namespace mk
