// A seeded sweep of decoder shapes through the whole compiler: unfused mk IR
// in the importer's vocabulary (FusedModuleText.h) -> fusion pipeline ->
// lowerToTasks -> finer events -> schedule -> validator (compileToSchedule)
// -> CPU executor, against the reference interpreter on the unfused IR, both
// on the same random weights (RandomWeights.h, from the case's seed).
//
// The shapes cover what a model card may say and the fixtures do not: GQA,
// MQA (one KV head) and MHA, head_dim independent of hidden / heads (odd
// when there is no rotary), q/k norm on and off (a one-head norm written both
// ways the dialect allows), biases on q/k/v and on the other linears, tied
// and untied embeddings, 1-3 layers, hidden, intermediate and vocab that are
// not multiples of 8, full, partial and interleaved rotary and none, and
// several maximum contexts and SM counts. Each case teacher-forces tokens,
// then generates greedily in one launch, the reference fed the executor's
// tokens so that both stay on one path.
//
// Both engines compute in f32 with the same kernels; the executor splits the
// attention into chunks merged in a fixed order, which reassociates sums, so
// logits agree within |a - b| <= kTolerance * (1 + |ref|), kTolerance = 1e-5.
// A generated token must be the reference's argmax, or within that tolerance
// of it (a near tie).
#include "FusedModuleText.h"

#include "compiler/driver/Pipeline.h"
#include "compiler/driver/RandomWeights.h"
#include "compiler/interpreter/ReferenceInterpreter.h"
#include "runtime/cpu/CpuExecutor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace {

using mk::test::ModelShape;

constexpr double kTolerance = 1e-5;
// Case i of the random part draws its shape, weights and tokens from
// kSweepSeed + i.
constexpr uint64_t kSweepSeed = 20261201;
constexpr int kRandomCases = 66;

struct SweepCase {
  std::string label; // what a fixed case is for; empty for a random one
  uint64_t seed = 0;
  ModelShape shape;
  int64_t maxContext = 32;
  uint32_t numSms = 8;
  bool threaded = false;
  bool mergeInOProj = false; // o_proj merges the attention's partials (no merge tasks)
  bool oProjByHead = false;  // o_proj cut by q head, adding in fixed point (no merge tasks)
  int64_t teacherTokens = 4, promptTokens = 1, newTokens = 3;
};

std::string rotaryText(const ModelShape &s) {
  if (!s.rotary)
    return "none";
  std::string text = s.rotaryDim ? "partial" + std::to_string(s.rotaryDim) : "full";
  return s.interleaved ? text + "il" : text;
}

std::string normText(const ModelShape &s) {
  if (!s.qkNorm)
    return "noqknorm";
  return s.oneHeadNormAsRmsNorm ? "qknorm" : "qkheadnorm";
}

std::string biasText(const ModelShape &s) {
  if (s.qkvBiases && s.otherBiases)
    return "allbias";
  return s.qkvBiases ? "qkvbias" : s.otherBiases ? "mlpbias" : "nobias";
}

// Every parameter, for failure messages: enough to rebuild the case.
std::string describe(const SweepCase &c) {
  const ModelShape &s = c.shape;
  std::ostringstream text;
  text << (c.label.empty() ? "random case" : c.label) << ": seed " << c.seed << ", hidden "
       << s.hidden << ", intermediate " << s.intermediate << ", vocab " << s.vocab << ", layers "
       << s.layers << ", heads " << s.heads << ", kv heads " << s.kvHeads << ", head_dim "
       << s.headDim << ", rotary " << rotaryText(s) << ", " << normText(s) << ", "
       << biasText(s) << ", " << (s.tied ? "tied" : "untied") << ", max context "
       << c.maxContext << ", " << c.numSms << " SMs, " << (c.threaded ? "threaded" : "single")
       << ", " << c.teacherTokens << " teacher-forced, prompt " << c.promptTokens << ", "
       << c.newTokens << " generated";
  return text.str();
}

void PrintTo(const SweepCase &c, std::ostream *os) { *os << describe(c); }

// Draws from mt19937_64, whose output the standard fixes, with plain modulo
// rather than the library's distributions, which it does not: the same seed
// gives the same case everywhere.
class Draw {
public:
  explicit Draw(uint64_t seed) : engine(seed) {}
  uint64_t below(uint64_t n) { return engine() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  T pick(std::initializer_list<T> values) {
    return values.begin()[below(values.size())];
  }

private:
  std::mt19937_64 engine;
};

// Steps a generation of `c` runs: the last prompt step yields the first new
// token; with an empty prompt, each new token costs a step.
int64_t generationSteps(const SweepCase &c) {
  return c.promptTokens ? c.promptTokens + c.newTokens - 1 : c.newTokens;
}

SweepCase randomCase(int index) {
  SweepCase c;
  c.seed = kSweepSeed + index;
  Draw draw(c.seed);
  ModelShape &s = c.shape;
  s.kvHeads = draw.pick<int64_t>({1, 1, 2, 3, 4});
  s.heads = s.kvHeads * draw.pick<int64_t>({1, 1, 2, 3, 4});
  uint64_t rotary = draw.below(10);
  s.rotary = rotary != 0;
  if (s.rotary) {
    s.headDim = draw.pick<int64_t>({2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 32});
    if (rotary >= 6 && s.headDim >= 4)
      s.rotaryDim = 2 * (1 + static_cast<int64_t>(draw.below(s.headDim / 2 - 1)));
    s.interleaved = draw.chance(25);
  } else {
    s.headDim = draw.pick<int64_t>({3, 5, 7, 8, 9, 12, 16});
  }
  s.hidden = 8 + static_cast<int64_t>(draw.below(draw.chance(20) ? 250 : 90));
  if (draw.chance(50))
    s.hidden |= 1;
  s.intermediate = 8 + static_cast<int64_t>(draw.below(draw.chance(20) ? 500 : 150));
  if (draw.chance(50))
    s.intermediate |= 1;
  s.vocab = 16 + static_cast<int64_t>(draw.below(draw.chance(20) ? 2000 : 300));
  if (draw.chance(70))
    s.vocab |= 1;
  s.layers = 1 + static_cast<int64_t>(draw.below(3));
  s.qkNorm = draw.chance(50);
  s.oneHeadNormAsRmsNorm = draw.chance(70);
  uint64_t biases = draw.below(10);
  s.qkvBiases = biases >= 5 && biases != 8;
  s.otherBiases = biases >= 8;
  s.tied = draw.chance(50);

  c.maxContext = draw.pick<int64_t>({6, 9, 16, 17, 24, 33, 40, 64, 97});
  c.numSms = draw.pick<uint32_t>({1, 2, 3, 4, 5, 7, 8, 11, 16, 33, 132});
  c.threaded = c.numSms <= 8 && draw.chance(25);
  c.promptTokens = static_cast<int64_t>(draw.below(3));
  c.newTokens = 2 + static_cast<int64_t>(draw.below(5));
  c.newTokens = std::min(c.newTokens, c.maxContext - 2);
  int64_t room = c.maxContext - generationSteps(c);
  if (room < 1) {
    c.promptTokens = 1;
    room = c.maxContext - generationSteps(c);
  }
  // Sometimes up to the end of the context (at most 40 positions), across
  // the attention's chunk boundaries; otherwise a few tokens.
  c.teacherTokens = draw.chance(40) ? std::min<int64_t>(room, 40 - generationSteps(c))
                                    : 1 + static_cast<int64_t>(draw.below(6));
  c.teacherTokens = std::max<int64_t>(1, std::min(c.teacherTokens, room));
  // Drawn last, so that the draws above give the shapes they always gave.
  c.mergeInOProj = draw.chance(50);
  c.oProjByHead = !c.mergeInOProj && draw.chance(50);
  return c;
}

// The shapes this sweep was written for, whatever the random part draws.
std::vector<SweepCase> fixedCases() {
  std::vector<SweepCase> cases;
  auto add = [&](const std::string &label, auto configure) {
    SweepCase c;
    c.label = label;
    c.seed = kSweepSeed + 1000 + cases.size();
    configure(c, c.shape);
    cases.push_back(c);
  };
  add("Qwen3 with one KV head (k norm imported as mk.rms_norm)", [](SweepCase &c, ModelShape &s) {
    s.kvHeads = 1;
    s.qkNorm = true;
    c.teacherTokens = 20;
    c.maxContext = 40;
  });
  add("Qwen3 with one KV head, the k norm as mk.head_rms_norm", [](SweepCase &, ModelShape &s) {
    s.kvHeads = 1;
    s.qkNorm = true;
    s.oneHeadNormAsRmsNorm = false;
  });
  add("one query head, both norms of one head", [](SweepCase &c, ModelShape &s) {
    s.hidden = 40;
    s.heads = s.kvHeads = 1;
    s.headDim = 24;
    s.qkNorm = true;
    c.numSms = 3;
  });
  add("MHA with q/k norm and biases", [](SweepCase &, ModelShape &s) {
    s.heads = s.kvHeads = 3;
    s.headDim = 10;
    s.qkNorm = true;
    s.qkvBiases = s.otherBiases = true;
  });
  add("head_dim wider than hidden / heads, partial interleaved rotary",
      [](SweepCase &c, ModelShape &s) {
        s.hidden = 21;
        s.heads = 4;
        s.kvHeads = 2;
        s.headDim = 32;
        s.rotaryDim = 8;
        s.interleaved = true;
        c.numSms = 132;
      });
  add("odd head_dim without rotary, Qwen2 biases, tied", [](SweepCase &c, ModelShape &s) {
    s.hidden = 45;
    s.intermediate = 77;
    s.vocab = 131;
    s.headDim = 7;
    s.rotary = false;
    s.qkvBiases = true;
    s.tied = true;
    c.threaded = true;
    c.numSms = 5;
  });
  add("32 query heads on one KV head, hidden 9", [](SweepCase &c, ModelShape &s) {
    s.hidden = 9;
    s.heads = 32;
    s.kvHeads = 1;
    s.headDim = 4;
    s.qkNorm = true;
    c.numSms = 7;
  });
  auto manyChunks = [](SweepCase &c, ModelShape &s) {
    s.layers = 1;
    c.numSms = 132;
    c.maxContext = 200;
    c.teacherTokens = 150;
    c.promptTokens = 2;
    c.newTokens = 9;
  };
  add("160 positions of 200 on 132 SMs, across many chunks", manyChunks);
  add("the same with o_proj merging the chunks' partials", [&](SweepCase &c, ModelShape &s) {
    manyChunks(c, s);
    c.mergeInOProj = true;
  });
  add("the same with o_proj cut by q head", [&](SweepCase &c, ModelShape &s) {
    manyChunks(c, s);
    c.oProjByHead = true;
  });
  add("more SMs than tasks, vocab 2", [](SweepCase &c, ModelShape &s) {
    s.vocab = 2;
    c.numSms = 1000;
  });
  add("vocab 1, six layers, threaded", [](SweepCase &c, ModelShape &s) {
    s.vocab = 1;
    s.layers = 6;
    c.numSms = 3;
    c.threaded = true;
  });
  add("max context 1: one step, nothing generated", [](SweepCase &c, ModelShape &) {
    c.maxContext = 1;
    c.teacherTokens = 1;
    c.promptTokens = 0;
    c.newTokens = 0;
  });
  add("max context 2: one step, one generated", [](SweepCase &c, ModelShape &) {
    c.maxContext = 2;
    c.teacherTokens = 1;
    c.promptTokens = 0;
    c.newTokens = 1;
  });
  add("intermediate 1: down_proj has one column", [](SweepCase &, ModelShape &s) {
    s.intermediate = 1;
  });
  add("head_dim 1, one head: o_proj has one column", [](SweepCase &, ModelShape &s) {
    s.heads = s.kvHeads = 1;
    s.headDim = 1;
    s.rotary = false;
    s.qkNorm = true;
  });
  return cases;
}

// Why a case cannot pass for a bug outside what this test may change, or "".
std::vector<SweepCase> sweepCases() {
  std::vector<SweepCase> cases = fixedCases();
  for (int i = 0; i < kRandomCases; ++i)
    cases.push_back(randomCase(i));
  return cases;
}

std::string caseName(const ::testing::TestParamInfo<SweepCase> &info) {
  const SweepCase &c = info.param;
  const ModelShape &s = c.shape;
  std::ostringstream name;
  name << (c.label.empty() ? "r" : "f") << (info.index < 10 ? "0" : "") << info.index << "_h"
       << s.hidden << "i" << s.intermediate << "v" << s.vocab << "L" << s.layers << "_q" << s.heads
       << "kv" << s.kvHeads << "d" << s.headDim << "_" << rotaryText(s) << "_" << normText(s)
       << "_" << biasText(s) << "_" << (s.tied ? "tied" : "untied") << "_ctx" << c.maxContext
       << "sm" << c.numSms << (c.threaded ? "threads" : "") << (c.mergeInOProj ? "_merged" : "")
       << (c.oProjByHead ? "_byhead" : "");
  return name.str();
}

// Checks `actual` against `expected` within the tolerance; returns the
// largest |a - b| / (1 + |ref|) seen.
double expectClose(const std::vector<float> &actual, const std::vector<float> &expected,
                   const std::string &where) {
  EXPECT_EQ(actual.size(), expected.size()) << where;
  double worst = 0;
  size_t reported = 0;
  for (size_t i = 0; i < std::min(actual.size(), expected.size()); ++i) {
    double error = std::fabs(double(actual[i]) - expected[i]) / (1.0 + std::fabs(expected[i]));
    worst = std::max(worst, std::isnan(error) ? INFINITY : error);
    if (!(error <= kTolerance) && reported++ < 5)
      ADD_FAILURE() << where << ", logit " << i << ": " << actual[i] << " vs the reference's "
                    << expected[i];
  }
  return worst;
}

int64_t argmax(const std::vector<float> &logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();
}

class ShapeSweepTest : public ::testing::TestWithParam<SweepCase> {};

TEST_P(ShapeSweepTest, TheScheduleComputesWhatTheUnfusedIrMeans) {
  const SweepCase &c = GetParam();
  SCOPED_TRACE(describe(c));
  std::string text = mk::test::unfusedModuleText(c.shape);

  // compileToSchedule reads a file: the driver's own path from IR to a
  // validated schedule, unchanged.
  int fd = -1;
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("mk-shape-sweep", "mlir", fd, path));
  llvm::FileRemover removeLater(path);
  {
    llvm::raw_fd_ostream file(fd, /*shouldClose=*/true);
    file << text;
  }
  mlir::MLIRContext compileContext, referenceContext;
  mk::CompileOptions options;
  options.maxContext = c.maxContext;
  options.target.numSms = c.numSms;
  options.target.mergeInOProj = c.mergeInOProj;
  options.target.oProjByHead =
      c.oProjByHead ? mk::TargetDescription::ByHead::On : mk::TargetDescription::ByHead::Off;
  auto compiled = mk::compileToSchedule(compileContext, path.str().str(), options);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  mk::WeightTable weights = mk::randomWeights(compiled->tasks, c.seed);

  auto unfused = mk::test::parseModule(referenceContext, text);
  ASSERT_TRUE(unfused);
  auto reference = mk::ReferenceInterpreter::create(*unfused, weights, c.maxContext);
  ASSERT_TRUE(bool(reference)) << llvm::toString(reference.takeError());
  auto referenceStep = [&](int64_t token) {
    auto logits = (*reference)->step(token);
    EXPECT_TRUE(bool(logits)) << llvm::toString(logits.takeError());
    return logits ? std::move(*logits) : std::vector<float>();
  };

  mk::CpuExecutorOptions executorOptions;
  executorOptions.checked = true;
  executorOptions.threaded = c.threaded;
  executorOptions.adversarialSeed = c.seed;
  Draw tokens(c.seed ^ 0x5eed);
  double worst = 0;
  try {
    mk::CpuExecutor executor(compiled->tasks, compiled->schedule, weights, executorOptions);
    std::vector<float> expected, actual;
    for (int64_t step = 0; step < c.teacherTokens; ++step) {
      int64_t token = static_cast<int64_t>(tokens.below(c.shape.vocab));
      actual = executor.step(token);
      expected = referenceStep(token);
      worst = std::max(worst, expectClose(actual, expected,
                                          "teacher-forced step " + std::to_string(step)));
      if (HasFailure())
        return;
    }

    std::vector<int64_t> prompt;
    for (int64_t i = 0; i < c.promptTokens; ++i)
      prompt.push_back(static_cast<int64_t>(tokens.below(c.shape.vocab)));
    std::vector<int64_t> generated = executor.generate(prompt, c.newTokens);
    ASSERT_EQ(generated.size(), static_cast<size_t>(c.newTokens));
    // The reference follows the executor's tokens; each must be its argmax,
    // or tie with it within the tolerance. An empty prompt continues from the
    // executor's own argmax of the last step.
    if (prompt.empty() && c.newTokens > 0)
      expected = referenceStep(argmax(actual));
    for (int64_t token : prompt)
      expected = referenceStep(token);
    for (int64_t i = 0; i < c.newTokens; ++i) {
      int64_t best = argmax(expected), token = generated[i];
      ASSERT_TRUE(token >= 0 && token < c.shape.vocab) << "generated token " << i << ": " << token;
      EXPECT_LE(expected[best] - expected[token], kTolerance * (1.0 + std::fabs(expected[best])))
          << "generated token " << i << " is " << token << ", the reference's argmax " << best;
      if (i + 1 < c.newTokens)
        expected = referenceStep(token);
    }
    ASSERT_EQ((*reference)->position(), executor.position());
    std::span<const float> last = executor.logits();
    worst = std::max(worst, expectClose(std::vector<float>(last.begin(), last.end()), expected,
                                        "the last generation step"));
  } catch (const mk::ExecutionError &error) {
    FAIL() << "the CPU executor failed: " << error.what();
  }
  std::ostringstream worstText;
  worstText << worst;
  RecordProperty("max_error", worstText.str());
}

INSTANTIATE_TEST_SUITE_P(Shapes, ShapeSweepTest, ::testing::ValuesIn(sweepCases()), caseName);

} // namespace
