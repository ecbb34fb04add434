// libmkrt's C API on the toy model's .mk file: the CPU session's logits are
// the kernels' with bf16 weights, generation is greedy over those logits and
// stops at EOS, and every misuse gets a status and a message.
#include "ToyArtifact.h"

#include "mkrt.h"
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/ControlBlock.h"
#include "runtime/mkrt/ChromeTrace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace mk {
namespace {

std::string writeToyModel(ArtifactOptions options = {}) {
  return toy::writeToyModel("model.mk", std::move(options));
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

size_t countOf(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++count;
  return count;
}

std::string readText(const std::string &path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(Mkrt, ReportsTheTimeOfEveryStep) {
  Session s(writeToyModel());
  std::vector<int64_t> prompt = {3, 17, 5}, generated(6);
  size_t produced = 0;
  mkrt_timing timing;
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), generated.size(),
                          generated.data(), &produced, &timing),
            MKRT_OK)
      << mkrt_last_error();
  EXPECT_EQ(timing.steps, 8);
  ASSERT_EQ(timing.num_step_ms, static_cast<size_t>(timing.steps));
  double sum = 0;
  for (size_t i = 0; i < timing.num_step_ms; ++i) {
    EXPECT_GT(timing.step_ms[i], 0) << "step " << i;
    sum += timing.step_ms[i];
  }
  EXPECT_LE(sum, timing.total_ms);

  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), 1, 2, generated.data(), &produced, &timing),
            MKRT_OK);
  EXPECT_EQ(timing.num_step_ms, 2u);
}

TEST(Mkrt, WritesAChromeTraceOfEveryTaskWhenAsked) {
  toy::ToyModel model = toy::buildToyModel(4);
  const size_t tasks = model.graph.tasks.size();
  Session s(writeToyModel());
  std::string path = toy::temporaryPath("trace.json");
  std::remove(path.c_str());
  std::vector<int64_t> prompt = {3, 17, 5}, generated(2);
  size_t produced = 0;
  ASSERT_EQ(mkrt_session_set_trace(s.session, path.c_str()), MKRT_OK);
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), generated.size(),
                          generated.data(), &produced, nullptr),
            MKRT_OK)
      << mkrt_last_error();
  std::string trace = readText(path);
  EXPECT_EQ(trace.rfind("{\"traceEvents\":[\n", 0), 0u);
  EXPECT_EQ(countOf(trace, "\"cat\":\"task\",\"ph\":\"X\""), 4 * tasks);
  EXPECT_EQ(countOf(trace, "\"ph\":\"M\""), 4u) << "one row per SM";
  EXPECT_EQ(countOf(trace, "{\"name\":\"task 0 (Embed 'embed', rows [0, 8))\""), 4u) << trace;
  EXPECT_GE(countOf(trace, "\"args\":{\"step\":3,\"position\":3,"), tasks);
  EXPECT_EQ(countOf(trace, "\"step\":4,"), 0u);
  EXPECT_NE(trace.find("\"otherData\":{\"device\":\"cpu"), std::string::npos);

  // Every call replaces the file; a NULL path stops tracing.
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), 1, 1, generated.data(), &produced, nullptr),
            MKRT_OK);
  EXPECT_EQ(countOf(readText(path), "\"cat\":\"task\""), tasks);
  std::remove(path.c_str());
  ASSERT_EQ(mkrt_session_set_trace(s.session, nullptr), MKRT_OK);
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), 1, 1, generated.data(), &produced, nullptr),
            MKRT_OK);
  EXPECT_FALSE(std::ifstream(path).good());

  // A trace that cannot be written fails the call, after its outputs.
  EXPECT_EQ(mkrt_session_set_trace(nullptr, path.c_str()), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_session_set_trace(s.session, ""), MKRT_ERROR_INVALID_ARGUMENT);
  std::string unwritable = toy::temporaryPath("absent") + "/trace.json";
  ASSERT_EQ(mkrt_session_set_trace(s.session, unwritable.c_str()), MKRT_OK);
  produced = 0;
  EXPECT_EQ(mkrt_generate(s.session, prompt.data(), 1, 1, generated.data(), &produced, nullptr),
            MKRT_ERROR_EXECUTION);
  EXPECT_EQ(produced, 1u);
  EXPECT_NE(std::string(mkrt_last_error()).find("cannot open '" + unwritable + "' for writing"),
            std::string::npos)
      << mkrt_last_error();
}

TEST(Mkrt, TraceNamesAreEscapedJsonStrings) {
  EXPECT_EQ(rt::jsonString("task 3 (Gemv 'q', rows [0, 4))"), "\"task 3 (Gemv 'q', rows [0, 4))\"");
  EXPECT_EQ(rt::jsonString("a\"b\\c\nd\te\x01" "f\x1f"), "\"a\\\"b\\\\c\\nd\\te\\u0001f\\u001f\"");
  EXPECT_EQ(rt::jsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"") << "UTF-8 is kept";

  toy::ToyModel model = toy::buildToyModel(2);
  model.graph.operations[model.graph.tasks[0].op].name = "odd \"name\"\n";
  rt::LaunchTrace trace;
  trace.times.assign(model.graph.tasks.size() * MK_TRACE_TIMES, 0);
  trace.times[MK_TRACE_WAIT] = 1000;
  trace.times[MK_TRACE_START] = 3500;
  trace.times[MK_TRACE_END] = 4000;
  trace.startNs = 500;
  std::ostringstream out;
  rt::writeChromeTrace(out, model.graph, model.schedule, trace, 7, "test");
  std::string text = out.str();
  EXPECT_NE(text.find("{\"name\":\"wait\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":0.500,\"dur\":2.500,"
                      "\"pid\":0,\"tid\":"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{\"name\":\"task 0 (Embed 'odd \\\"name\\\"\\n', rows [0, 8))\",\"cat\":"
                      "\"task\",\"ph\":\"X\",\"ts\":3.000,\"dur\":0.500,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"args\":{\"step\":0,\"position\":7,\"task\":0}}"), std::string::npos);
  EXPECT_EQ(countOf(text, "\"ph\":\"X\""), 2u) << "tasks that did not run have no event";
}

// A start position: the first token goes there, over a cache of zeros, in
// every call; the step times, the trace and the refusals count from it.
TEST(Mkrt, StartsEveryCallAtTheSessionsStartPosition) {
  toy::ToyModel model = toy::buildToyModel(4);
  WeightTable rounded = toy::roundedWeights(model.weights);
  Session s(writeToyModel());
  const int64_t start = toy::kMaxContext - 4;
  ASSERT_EQ(mkrt_session_set_start_position(s.session, start), MKRT_OK) << mkrt_last_error();
  std::vector<int64_t> tokens = {3, 17, 5};
  std::vector<float> logits = evalLogits(s.session, tokens);
  toy::ToyReference reference(rounded);
  reference.startAt(start);
  for (size_t t = 0; t < tokens.size(); ++t) {
    std::vector<float> expected = reference.step(tokens[t]);
    for (int64_t i = 0; i < toy::kVocab; ++i)
      EXPECT_LE(std::fabs(logits[t * toy::kVocab + i] - expected[i]),
                1e-5f * std::max(1.0f, std::fabs(expected[i])));
  }
  EXPECT_EQ(evalLogits(s.session, tokens), logits) << "every call starts over the same zeros";

  std::string path = toy::temporaryPath("start-trace.json");
  ASSERT_EQ(mkrt_session_set_trace(s.session, path.c_str()), MKRT_OK);
  std::vector<int64_t> generated(3);
  size_t produced = 0;
  mkrt_timing timing;
  ASSERT_EQ(mkrt_generate(s.session, tokens.data(), 2, 3, generated.data(), &produced, &timing),
            MKRT_OK)
      << mkrt_last_error();
  EXPECT_EQ(timing.steps, 4);
  EXPECT_EQ(timing.num_step_ms, 4u);
  std::string trace = readText(path);
  std::string first = "\"args\":{\"step\":0,\"position\":" + std::to_string(start) + ",";
  EXPECT_GE(countOf(trace, first), model.graph.tasks.size()) << trace.substr(0, 400);
  EXPECT_EQ(countOf(trace, first), countOf(trace, "\"args\":{\"step\":0,\"position\":"))
      << "every event of step 0 (tasks and waits) is at the start position";
  std::remove(path.c_str());
  ASSERT_EQ(mkrt_session_set_trace(s.session, nullptr), MKRT_OK);

  // Past the context: refused, naming the start position.
  EXPECT_EQ(mkrt_generate(s.session, tokens.data(), 2, 4, generated.data(), &produced, nullptr),
            MKRT_ERROR_CONTEXT_FULL);
  EXPECT_NE(std::string(mkrt_last_error())
                .find("start position " + std::to_string(start) +
                      " + 5 positions pass the session's max context of " +
                      std::to_string(toy::kMaxContext)),
            std::string::npos)
      << mkrt_last_error();
  EXPECT_EQ(mkrt_session_set_start_position(s.session, toy::kMaxContext),
            MKRT_ERROR_CONTEXT_FULL);
  EXPECT_EQ(mkrt_session_set_start_position(s.session, -1), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mkrt_session_set_start_position(nullptr, 0), MKRT_ERROR_INVALID_ARGUMENT);

  // 0 restores position 0: the logits of a new context.
  ASSERT_EQ(mkrt_session_set_start_position(s.session, 0), MKRT_OK);
  toy::ToyReference fromZero(rounded);
  std::vector<float> again = evalLogits(s.session, {tokens[0]});
  std::vector<float> expected = fromZero.step(tokens[0]);
  for (int64_t i = 0; i < toy::kVocab; ++i)
    EXPECT_LE(std::fabs(again[i] - expected[i]), 1e-5f * std::max(1.0f, std::fabs(expected[i])));
}

// Prompts by step: the CPU executor takes the setting and changes nothing
// (its prompts already go one step at a time or through a prefill graph).
TEST(Mkrt, PromptByStepIsTakenAndLeavesTheCpuAsItIs) {
  Session s(writeToyModel());
  std::vector<int64_t> prompt = {3, 17, 5}, before(4), after(4);
  size_t produced = 0;
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), 4, before.data(), &produced,
                          nullptr),
            MKRT_OK)
      << mkrt_last_error();
  EXPECT_EQ(mkrt_session_set_prompt_by_step(s.session, 1), MKRT_OK);
  ASSERT_EQ(mkrt_generate(s.session, prompt.data(), prompt.size(), 4, after.data(), &produced,
                          nullptr),
            MKRT_OK)
      << mkrt_last_error();
  EXPECT_EQ(after, before);
  EXPECT_EQ(mkrt_session_set_prompt_by_step(nullptr, 1), MKRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mkrt_last_error()).find("session is NULL"), std::string::npos);
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

// A failing GPU has its own status, apart from an unavailable one, and the
// values callers compiled against before it existed keep their meaning.
TEST(Mkrt, TellsADeviceFailureFromAnUnavailableDevice) {
  EXPECT_EQ(MKRT_ERROR_NO_DEVICE, 3);
  EXPECT_EQ(MKRT_ERROR_EXECUTION, 5);
  EXPECT_EQ(MKRT_ERROR_DEVICE_FAILURE, 6);
}

TEST(Mkrt, StatesItsVersionAndTheDriverFound) {
  EXPECT_EQ(std::string(mkrt_version()).rfind("libmkrt for .mk format " + std::to_string(mk::kMkFormatVersion) + ", ", 0), 0u)
      << mkrt_version();
  EXPECT_NE(std::string(mkrt_cuda_driver_version()), "");
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
