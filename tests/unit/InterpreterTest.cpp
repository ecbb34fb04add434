// Each mk op, run by the reference interpreter in a minimal decode_step, is
// checked against a direct computation in double precision (or by hand); a
// small two-layer model checks that the ops compose, cache by cache.
#include "compiler/interpreter/ReferenceInterpreter.h"

#include "compiler/dialect/MkDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <map>
#include <random>

namespace {

using Vector = std::vector<float>;

std::string tensor(int64_t length) { return "tensor<" + std::to_string(length) + "xf32>"; }

std::string tensor(int64_t rows, int64_t columns) {
  return "tensor<" + std::to_string(rows) + "x" + std::to_string(columns) + "xf32>";
}

// A cache-free decode_step whose input %x is row %token of @x [rows, width].
// `body` defines %y of yLength entries, which is returned as the logits.
std::string singleInputModule(int64_t rows, int64_t width, int64_t yLength,
                              const std::string &declarations, const std::string &body) {
  return "mk.weight @x : " + tensor(rows, width) + "\n" + declarations +
         "func.func @decode_step(%token: i64, %pos: index) -> (" + tensor(yLength) +
         ", i64) {\n"
         "  %x = mk.embedding @x[%token] : " + tensor(width) + "\n" + body +
         "  %t = mk.argmax %y : " + tensor(yLength) + "\n"
         "  return %y, %t : " + tensor(yLength) + ", i64\n}\n";
}

// A [rows, width] matrix that picks entries first..first+rows-1 of its input:
// it lets one input row carry several operands (q, k, v; gate, up).
Vector selection(int64_t rows, int64_t width, int64_t first) {
  Vector matrix(rows * width, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    matrix[r * width + first + r] = 1.0f;
  return matrix;
}

Vector randomVector(size_t size, unsigned seed, float scale = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-scale, scale);
  Vector values(size);
  for (float &value : values)
    value = uniform(generator);
  return values;
}

Vector concat(std::initializer_list<Vector> parts) {
  Vector all;
  for (const Vector &part : parts)
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

void expectClose(const Vector &actual, const std::vector<double> &expected,
                 double relativeTolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], relativeTolerance * std::max(1.0, std::abs(expected[i])))
        << "at index " << i;
}

template <typename T>
std::string errorMessage(llvm::Expected<T> &result) {
  if (result)
    return "";
  return llvm::toString(result.takeError());
}

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() { context.loadDialect<mk::MkDialect, mlir::func::FuncDialect>(); }

  void addWeight(const std::string &name, std::vector<int64_t> shape, Vector values) {
    mk::Weight weight;
    weight.name = name;
    weight.shape = std::move(shape);
    weight.values = std::move(values);
    weights.add(std::move(weight));
  }

  void parse(const std::string &source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    ASSERT_TRUE(module) << "cannot parse:\n" << source;
  }

  llvm::Expected<std::unique_ptr<mk::ReferenceInterpreter>> create(int64_t maxContext = 16) {
    if (!module)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no module was parsed");
    return mk::ReferenceInterpreter::create(*module, weights, maxContext);
  }

  // Parses `source`, then runs one step per token and returns the last logits.
  Vector run(const std::string &source, const std::vector<int64_t> &tokens) {
    parse(source);
    auto interpreter = create(static_cast<int64_t>(tokens.size()) + 1);
    if (!interpreter) {
      ADD_FAILURE() << errorMessage(interpreter);
      return {};
    }
    Vector logits;
    for (int64_t token : tokens) {
      auto result = (*interpreter)->step(token);
      if (!result) {
        ADD_FAILURE() << errorMessage(result);
        return {};
      }
      logits = std::move(*result);
    }
    return logits;
  }

  mlir::MLIRContext context;
  mk::WeightTable weights;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

// --- embedding ------------------------------------------------------------

TEST_F(InterpreterTest, EmbeddingReturnsTheTokensRow) {
  Vector table = randomVector(4 * 3, 1);
  addWeight("x", {4, 3}, table);
  Vector logits = run(singleInputModule(4, 3, 3, "", "  %y = mk.add %x, %x : " + tensor(3) + "\n"),
                      {2});
  ASSERT_EQ(logits.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(logits[i], 2 * table[2 * 3 + i]);
}

TEST_F(InterpreterTest, TokenOutsideTheEmbeddingTableIsAnErrorAndUsesNoPosition) {
  addWeight("x", {4, 3}, randomVector(12, 1));
  parse(singleInputModule(4, 3, 3, "", "  %y = mk.add %x, %x : " + tensor(3) + "\n"));
  auto interpreter = create();
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);

  for (int64_t token : {4, -1}) {
    auto result = (*interpreter)->step(token);
    std::string message = errorMessage(result);
    EXPECT_NE(message.find("mk.embedding"), std::string::npos) << message;
    EXPECT_NE(message.find("token " + std::to_string(token)), std::string::npos) << message;
    EXPECT_EQ((*interpreter)->position(), 0);
  }
  auto result = (*interpreter)->step(3);
  EXPECT_TRUE(bool(result)) << errorMessage(result);
  EXPECT_EQ((*interpreter)->position(), 1);
}

// --- norms ----------------------------------------------------------------

std::vector<double> referenceRmsNorm(const Vector &x, const Vector &weight, double eps) {
  double meanSquare = 0;
  for (float value : x)
    meanSquare += double(value) * value / x.size();
  std::vector<double> y;
  for (size_t i = 0; i < x.size(); ++i)
    y.push_back(x[i] / std::sqrt(meanSquare + eps) * weight[i]);
  return y;
}

TEST_F(InterpreterTest, RmsNormMatchesTheFormula) {
  // An eps of 0.1 against inputs of order 1 makes forgetting eps, or adding
  // it outside the square root, fail the test.
  Vector x = randomVector(2 * 5, 2), gamma = randomVector(5, 3);
  addWeight("x", {2, 5}, x);
  addWeight("gamma", {5}, gamma);
  Vector logits = run(singleInputModule(2, 5, 5, "mk.weight @gamma : tensor<5xf32>\n",
                                        "  %y = mk.rms_norm %x weight @gamma {eps = 1.0e-01 : f32}"
                                        " : tensor<5xf32>\n"),
                      {1});
  expectClose(logits, referenceRmsNorm(Vector(x.begin() + 5, x.end()), gamma, 0.1), 1e-6);
}

TEST_F(InterpreterTest, HeadRmsNormNormalizesEachHeadOnItsOwn) {
  // Heads of very different magnitude: one norm over the whole vector
  // would give a different answer for every head.
  Vector x = randomVector(12, 4);
  for (int i = 4; i < 8; ++i)
    x[i] *= 100.0f;
  Vector gamma = randomVector(4, 5);
  addWeight("x", {1, 12}, x);
  addWeight("gamma", {4}, gamma);
  Vector logits =
      run(singleInputModule(1, 12, 12, "mk.weight @gamma : tensor<4xf32>\n",
                            "  %y = mk.head_rms_norm %x weight @gamma {eps = 1.0e-06 : f32, "
                            "head_dim = 4 : i64} : tensor<12xf32>\n"),
          {0});
  std::vector<double> expected;
  for (int head = 0; head < 3; ++head) {
    auto y = referenceRmsNorm(Vector(x.begin() + 4 * head, x.begin() + 4 * head + 4), gamma, 1e-6);
    expected.insert(expected.end(), y.begin(), y.end());
  }
  expectClose(logits, expected, 1e-6);
}

// --- linear and logits ----------------------------------------------------

std::vector<double> referenceMatVec(const Vector &matrix, const Vector &x, size_t rows) {
  std::vector<double> y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < x.size(); ++c)
      y[r] += double(matrix[r * x.size() + c]) * x[c];
  return y;
}

// 13 inputs: not a multiple of any unrolling, so a remainder loop is needed.
constexpr int64_t kIn = 13, kOut = 3;

TEST_F(InterpreterTest, LinearWithBiasIsWxPlusB) {
  Vector x = randomVector(kIn, 6), w = randomVector(kOut * kIn, 7), b = randomVector(kOut, 8);
  addWeight("x", {1, kIn}, x);
  addWeight("w", {kOut, kIn}, w);
  addWeight("b", {kOut}, b);
  Vector logits = run(
      singleInputModule(1, kIn, kOut,
                        "mk.weight @w : " + tensor(kOut, kIn) + "\nmk.weight @b : " + tensor(kOut) +
                            "\n",
                        "  %y = mk.linear %x weight @w bias @b : " + tensor(kIn) + " -> " +
                            tensor(kOut) + "\n"),
      {0});
  std::vector<double> expected = referenceMatVec(w, x, kOut);
  for (int64_t r = 0; r < kOut; ++r)
    expected[r] += b[r];
  expectClose(logits, expected, 1e-6);
}

TEST_F(InterpreterTest, LinearWithoutBiasIsWx) {
  Vector x = randomVector(kIn, 9), w = randomVector(kOut * kIn, 10);
  addWeight("x", {1, kIn}, x);
  addWeight("w", {kOut, kIn}, w);
  Vector logits = run(singleInputModule(1, kIn, kOut, "mk.weight @w : " + tensor(kOut, kIn) + "\n",
                                        "  %y = mk.linear %x weight @w : " + tensor(kIn) + " -> " +
                                            tensor(kOut) + "\n"),
                      {0});
  expectClose(logits, referenceMatVec(w, x, kOut), 1e-6);
}

TEST_F(InterpreterTest, LogitsIsWx) {
  Vector x = randomVector(kIn, 11), w = randomVector(kOut * kIn, 12);
  addWeight("x", {1, kIn}, x);
  addWeight("lm_head", {kOut, kIn}, w);
  Vector logits =
      run(singleInputModule(1, kIn, kOut, "mk.weight @lm_head : " + tensor(kOut, kIn) + "\n",
                            "  %y = mk.logits %x weight @lm_head : " + tensor(kIn) + " -> " +
                                tensor(kOut) + "\n"),
          {0});
  expectClose(logits, referenceMatVec(w, x, kOut), 1e-6);
}

// --- rotary ---------------------------------------------------------------

struct RotaryCase {
  int64_t rotaryDim;
  bool interleaved;
};

std::string rotaryModule(const RotaryCase &rotary, const Vector &invFreq) {
  std::string frequencies;
  for (float f : invFreq)
    frequencies += (frequencies.empty() ? "" : ", ") + std::to_string(f);
  return singleInputModule(
      1, 16, 16, "",
      "  %y = mk.rotary %x at %pos {head_dim = 8 : i64, rotary_dim = " +
          std::to_string(rotary.rotaryDim) + " : i64, theta = 1.0e+04 : f64, inv_freq = dense<[" +
          frequencies + "]> : tensor<" + std::to_string(invFreq.size()) + "xf32>" +
          (rotary.interleaved ? ", interleaved" : "") + "} : tensor<16xf32>\n");
}

// Rotary as RoFormer defines it: each pair (a, b) is the complex number
// a + ib, multiplied by e^(i pos f).
std::vector<double> referenceRotary(const Vector &x, const RotaryCase &rotary,
                                    const Vector &invFreq, int64_t pos) {
  std::vector<double> y(x.begin(), x.end());
  int64_t half = rotary.rotaryDim / 2;
  for (int64_t head = 0; head < 2; ++head)
    for (int64_t i = 0; i < half; ++i) {
      int64_t re = head * 8 + (rotary.interleaved ? 2 * i : i);
      int64_t im = head * 8 + (rotary.interleaved ? 2 * i + 1 : i + half);
      std::complex<double> z =
          std::complex<double>(x[re], x[im]) * std::polar(1.0, double(pos) * invFreq[i]);
      y[re] = z.real();
      y[im] = z.imag();
    }
  return y;
}

void PrintTo(const RotaryCase &rotary, std::ostream *os) {
  *os << (rotary.interleaved ? "interleaved" : "halves") << ", rotary_dim " << rotary.rotaryDim;
}

class RotaryTest : public InterpreterTest, public ::testing::WithParamInterface<RotaryCase> {};

TEST_P(RotaryTest, RotatesPairsByPositionTimesFrequency) {
  const RotaryCase &rotary = GetParam();
  // Exactly representable frequencies keep the f32 angle exact, so the
  // tolerance only has to cover cos, sin and the products.
  Vector invFreq = {1.0f, 0.25f, 0.0625f, 0.015625f};
  invFreq.resize(rotary.rotaryDim / 2);
  Vector x = randomVector(16, 13);
  addWeight("x", {1, 16}, x);
  for (int64_t pos : {0, 1, 5}) {
    Vector logits = run(rotaryModule(rotary, invFreq), std::vector<int64_t>(pos + 1, 0));
    expectClose(logits, referenceRotary(x, rotary, invFreq, pos), 2e-6);
    // Entries beyond rotary_dim pass through unchanged.
    for (int64_t head = 0; head < 2; ++head)
      for (int64_t i = rotary.rotaryDim; i < 8; ++i)
        EXPECT_EQ(logits[head * 8 + i], x[head * 8 + i]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, RotaryTest,
    ::testing::Values(RotaryCase{8, false}, RotaryCase{8, true}, RotaryCase{4, false},
                      RotaryCase{4, true}),
    [](const ::testing::TestParamInfo<RotaryCase> &info) {
      return std::string(info.param.interleaved ? "Interleaved" : "Halves") + "RotaryDim" +
             std::to_string(info.param.rotaryDim);
    });

// --- attention ------------------------------------------------------------

// A decode_step whose input row holds q, k and v one after the other, picked
// out by selection matrices; it returns the attention output.
std::string attentionModule(int64_t heads, int64_t kvHeads, int64_t headDim, float scale,
                            int64_t rows) {
  int64_t qLength = heads * headDim, kvLength = kvHeads * headDim;
  int64_t width = qLength + 2 * kvLength;
  std::string cache =
      "!mk.kv_cache<" + std::to_string(kvHeads) + ", " + std::to_string(headDim) + ">";
  auto pick = [&](const std::string &name, int64_t length) {
    return "  %" + name + " = mk.linear %x weight @w" + name + " : " + tensor(width) + " -> " +
           tensor(length) + "\n";
  };
  return "mk.weight @x : " + tensor(rows, width) + "\n" +
         "mk.weight @wq : " + tensor(qLength, width) + "\n" +
         "mk.weight @wk : " + tensor(kvLength, width) + "\n" +
         "mk.weight @wv : " + tensor(kvLength, width) + "\n" +
         "func.func @decode_step(%token: i64, %pos: index, %cache: " + cache + ") -> (" +
         tensor(qLength) + ", i64) {\n" +
         "  %x = mk.embedding @x[%token] : " + tensor(width) + "\n" + pick("q", qLength) +
         pick("k", kvLength) + pick("v", kvLength) +
         "  %y = mk.attention %q, %k, %v cache %cache at %pos {num_heads = " +
         std::to_string(heads) + " : i64, num_kv_heads = " + std::to_string(kvHeads) +
         " : i64, head_dim = " + std::to_string(headDim) +
         " : i64, scale = " + std::to_string(scale) + " : f32} : " + tensor(qLength) + ", " +
         tensor(kvLength) + ", " + tensor(kvLength) + ", " + cache + " -> " + tensor(qLength) +
         "\n" + "  %t = mk.argmax %y : " + tensor(qLength) + "\n" +
         "  return %y, %t : " + tensor(qLength) + ", i64\n}\n";
}

class AttentionTest : public InterpreterTest {
protected:
  // `rows` are the input rows, each the concatenation of q, k and v.
  void addAttentionWeights(int64_t heads, int64_t kvHeads, int64_t headDim,
                           const std::vector<Vector> &rows) {
    int64_t qLength = heads * headDim, kvLength = kvHeads * headDim;
    int64_t width = qLength + 2 * kvLength;
    Vector table;
    for (const Vector &row : rows) {
      ASSERT_EQ(static_cast<int64_t>(row.size()), width);
      table.insert(table.end(), row.begin(), row.end());
    }
    addWeight("x", {static_cast<int64_t>(rows.size()), width}, table);
    addWeight("wq", {qLength, width}, selection(qLength, width, 0));
    addWeight("wk", {kvLength, width}, selection(kvLength, width, qLength));
    addWeight("wv", {kvLength, width}, selection(kvLength, width, qLength + kvLength));
  }
};

TEST_F(AttentionTest, TwoPositionsMatchAHandComputedSoftmax) {
  // Rows are q(2), k(2), v(2).
  addAttentionWeights(1, 1, 2, {concat({{9, 9}, {1, 0}, {1, 2}}), concat({{1, 1}, {0, 2}, {3, -1}})});
  parse(attentionModule(1, 1, 2, 0.5f, 2));
  auto interpreter = create();
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);

  // One position: all weight on it, whatever q is.
  auto first = (*interpreter)->step(0);
  ASSERT_TRUE(bool(first)) << errorMessage(first);
  expectClose(*first, {1, 2}, 1e-6);

  // Scores 0.5 * (1,1).(1,0) = 0.5 and 0.5 * (1,1).(0,2) = 1.0, so
  // p0 = e^0.5 / (e^0.5 + e^1) = 1 / (1 + e^0.5); output p0 v0 + (1 - p0) v1.
  auto second = (*interpreter)->step(1);
  ASSERT_TRUE(bool(second)) << errorMessage(second);
  double p0 = 1.0 / (1.0 + std::exp(0.5));
  expectClose(*second, {p0 * 1 + (1 - p0) * 3, p0 * 2 + (1 - p0) * -1}, 1e-6);
}

TEST_F(AttentionTest, QueryHeadsShareKvHeadsInConsecutiveGroups) {
  // 4 query heads, 2 KV heads, head_dim 1: heads 0 and 1 read KV head 0,
  // heads 2 and 3 read KV head 1. Rows are q(4), k(2), v(2).
  addAttentionWeights(4, 2, 1,
                      {concat({{1, 1, 1, 1}, {0, 0}, {2, 6}}),
                       concat({{1, 2, 1, 0.5f}, {0, 5}, {4, 10}})});
  parse(attentionModule(4, 2, 1, 1.0f, 2));
  auto interpreter = create();
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);

  auto first = (*interpreter)->step(0);
  ASSERT_TRUE(bool(first)) << errorMessage(first);
  expectClose(*first, {2, 2, 6, 6}, 1e-6);

  // KV head 0 has equal keys, so its heads average its values: 3. KV head 1
  // has keys 0 and 5; head h puts sigmoid(5 q_h) on position 1.
  auto second = (*interpreter)->step(1);
  ASSERT_TRUE(bool(second)) << errorMessage(second);
  expectClose(*second, {3, 3, 6 + 4 * sigmoid(5 * 1.0), 6 + 4 * sigmoid(5 * 0.5)}, 1e-6);
}

TEST_F(AttentionTest, SoftmaxStaysFiniteForLargeScores) {
  // Scores 1000 and 990: exp of either overflows f32 unless the largest
  // score is subtracted first. Rows are q(1), k(1), v(1).
  addAttentionWeights(1, 1, 1, {concat({{1}, {1000}, {1}}), concat({{1}, {990}, {0}})});
  Vector logits = run(attentionModule(1, 1, 1, 1.0f, 2), {0, 1});
  expectClose(logits, {sigmoid(10)}, 1e-6);
}

// --- elementwise ----------------------------------------------------------

TEST_F(InterpreterTest, SiluMulIsGateTimesSigmoidOfGateTimesUp) {
  Vector gate = {-20, -2, -0.5f, 0, 0.5f, 3, 20}, up = randomVector(7, 14, 2.0f);
  addWeight("x", {1, 14}, concat({gate, up}));
  addWeight("wg", {7, 14}, selection(7, 14, 0));
  addWeight("wu", {7, 14}, selection(7, 14, 7));
  Vector logits = run(
      singleInputModule(1, 14, 7, "mk.weight @wg : " + tensor(7, 14) + "\nmk.weight @wu : " +
                                      tensor(7, 14) + "\n",
                        "  %g = mk.linear %x weight @wg : tensor<14xf32> -> tensor<7xf32>\n"
                        "  %u = mk.linear %x weight @wu : tensor<14xf32> -> tensor<7xf32>\n"
                        "  %y = mk.silu_mul %g, %u : tensor<7xf32>\n"),
      {0});
  std::vector<double> expected;
  for (size_t i = 0; i < gate.size(); ++i)
    expected.push_back(gate[i] * sigmoid(gate[i]) * up[i]);
  expectClose(logits, expected, 1e-6);
}

TEST_F(InterpreterTest, AddIsElementwise) {
  Vector lhs = randomVector(5, 15), rhs = randomVector(5, 16);
  addWeight("x", {1, 10}, concat({lhs, rhs}));
  addWeight("wl", {5, 10}, selection(5, 10, 0));
  addWeight("wr", {5, 10}, selection(5, 10, 5));
  Vector logits = run(
      singleInputModule(1, 10, 5, "mk.weight @wl : " + tensor(5, 10) + "\nmk.weight @wr : " +
                                      tensor(5, 10) + "\n",
                        "  %l = mk.linear %x weight @wl : tensor<10xf32> -> tensor<5xf32>\n"
                        "  %r = mk.linear %x weight @wr : tensor<10xf32> -> tensor<5xf32>\n"
                        "  %y = mk.add %l, %r : tensor<5xf32>\n"),
      {0});
  ASSERT_EQ(logits.size(), 5u);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(logits[i], lhs[i] + rhs[i]);
}

// --- argmax ---------------------------------------------------------------

TEST_F(InterpreterTest, ArgmaxPicksTheLowestIndexAmongEqualMaxima) {
  // The argmax is observed through a second embedding whose row i is [i].
  const std::vector<std::pair<Vector, int>> cases = {
      {{1, 5, 5, 2}, 1}, {{-3, -1, -1, -2}, 1}, {{7, 7, 7, 7}, 0}, {{0, 1, 2, 9}, 3}};
  Vector table;
  for (const auto &[row, expected] : cases)
    table.insert(table.end(), row.begin(), row.end());
  addWeight("x", {4, 4}, table);
  addWeight("index", {4, 1}, {0, 1, 2, 3});
  parse("mk.weight @x : tensor<4x4xf32>\n"
        "mk.weight @index : tensor<4x1xf32>\n"
        "func.func @decode_step(%token: i64, %pos: index) -> (tensor<1xf32>, i64) {\n"
        "  %x = mk.embedding @x[%token] : tensor<4xf32>\n"
        "  %t = mk.argmax %x : tensor<4xf32>\n"
        "  %i = mk.embedding @index[%t] : tensor<1xf32>\n"
        "  return %i, %t : tensor<1xf32>, i64\n"
        "}\n");
  auto interpreter = create();
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);
  for (size_t token = 0; token < cases.size(); ++token) {
    auto result = (*interpreter)->step(token);
    ASSERT_TRUE(bool(result)) << errorMessage(result);
    EXPECT_EQ((*result)[0], cases[token].second) << "row " << token;
  }
}

// --- a whole model --------------------------------------------------------

// Two Llama-style layers (GQA, rotary, gated MLP, q bias) with random
// weights, against a direct double-precision implementation. Each layer has
// its own cache, so mixing them up, or mishandling positions, shows.
class TinyModelTest : public InterpreterTest {
protected:
  static constexpr int64_t kVocab = 11, kHidden = 8, kHeads = 2, kKvHeads = 1, kHeadDim = 4,
                           kFfn = 12, kLayers = 2;
  static constexpr double kEps = 1e-5;
  static constexpr float kScale = 0.5f;
  const Vector invFreq = {1.0f, 0.01f};

  std::map<std::string, Vector> values;

  void addRandomWeight(const std::string &name, std::vector<int64_t> shape, unsigned seed) {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    values[name] = randomVector(count, seed, 0.5f);
    addWeight(name, std::move(shape), values[name]);
  }

  std::string layerIr(int layer) {
    std::string l = std::to_string(layer), next = std::to_string(layer + 1);
    std::string w = "@l" + l + "_";
    std::string h = tensor(kHidden), q = tensor(kHeads * kHeadDim),
                kv = tensor(kKvHeads * kHeadDim), f = tensor(kFfn);
    std::string cache = "!mk.kv_cache<1, 4>";
    std::string rotary = " at %pos {head_dim = 4 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : "
                         "f64, inv_freq = dense<[1.0, 0.01]> : tensor<2xf32>} : ";
    return "  %n" + l + " = mk.rms_norm %h" + l + " weight " + w +
           "in_norm {eps = 1.0e-05 : f32} : " + h + "\n" + "  %q" + l + " = mk.linear %n" + l +
           " weight " + w + "wq bias " + w + "bq : " + h + " -> " + q + "\n" + "  %k" + l +
           " = mk.linear %n" + l + " weight " + w + "wk : " + h + " -> " + kv + "\n" + "  %v" + l +
           " = mk.linear %n" + l + " weight " + w + "wv : " + h + " -> " + kv + "\n" + "  %qr" +
           l + " = mk.rotary %q" + l + rotary + q + "\n" + "  %kr" + l + " = mk.rotary %k" + l +
           rotary + kv + "\n" + "  %a" + l + " = mk.attention %qr" + l + ", %kr" + l + ", %v" + l +
           " cache %c" + l +
           " at %pos {num_heads = 2 : i64, num_kv_heads = 1 : i64, head_dim = 4 : i64, scale = "
           "5.0e-01 : f32} : " +
           q + ", " + kv + ", " + kv + ", " + cache + " -> " + q + "\n" + "  %o" + l +
           " = mk.linear %a" + l + " weight " + w + "wo : " + q + " -> " + h + "\n" + "  %r" + l +
           " = mk.add %h" + l + ", %o" + l + " : " + h + "\n" + "  %m" + l + " = mk.rms_norm %r" +
           l + " weight " + w + "post_norm {eps = 1.0e-05 : f32} : " + h + "\n" + "  %g" + l +
           " = mk.linear %m" + l + " weight " + w + "wg : " + h + " -> " + f + "\n" + "  %u" + l +
           " = mk.linear %m" + l + " weight " + w + "wu : " + h + " -> " + f + "\n" + "  %s" + l +
           " = mk.silu_mul %g" + l + ", %u" + l + " : " + f + "\n" + "  %d" + l +
           " = mk.linear %s" + l + " weight " + w + "wd : " + f + " -> " + h + "\n" + "  %h" +
           next + " = mk.add %r" + l + ", %d" + l + " : " + h + "\n";
  }

  std::string buildModel() {
    std::string declarations, body;
    unsigned seed = 100;
    auto declare = [&](const std::string &name, std::vector<int64_t> shape) {
      declarations += "mk.weight @" + name + " : " +
                      (shape.size() == 1 ? tensor(shape[0]) : tensor(shape[0], shape[1])) + "\n";
      addRandomWeight(name, std::move(shape), seed++);
    };
    declare("embed", {kVocab, kHidden});
    for (int layer = 0; layer < kLayers; ++layer) {
      std::string p = "l" + std::to_string(layer) + "_";
      declare(p + "in_norm", {kHidden});
      declare(p + "wq", {kHeads * kHeadDim, kHidden});
      declare(p + "bq", {kHeads * kHeadDim});
      declare(p + "wk", {kKvHeads * kHeadDim, kHidden});
      declare(p + "wv", {kKvHeads * kHeadDim, kHidden});
      declare(p + "wo", {kHidden, kHeads * kHeadDim});
      declare(p + "post_norm", {kHidden});
      declare(p + "wg", {kFfn, kHidden});
      declare(p + "wu", {kFfn, kHidden});
      declare(p + "wd", {kHidden, kFfn});
      body += layerIr(layer);
    }
    declare("final_norm", {kHidden});
    declare("lm_head", {kVocab, kHidden});
    return declarations +
           "func.func @decode_step(%token: i64, %pos: index, %c0: !mk.kv_cache<1, 4>, "
           "%c1: !mk.kv_cache<1, 4>) -> (tensor<11xf32>, i64) {\n"
           "  %h0 = mk.embedding @embed[%token] : tensor<8xf32>\n" +
           body +
           "  %final = mk.rms_norm %h2 weight @final_norm {eps = 1.0e-05 : f32} : tensor<8xf32>\n"
           "  %logits = mk.logits %final weight @lm_head : tensor<8xf32> -> tensor<11xf32>\n"
           "  %next = mk.argmax %logits : tensor<11xf32>\n"
           "  return %logits, %next : tensor<11xf32>, i64\n}\n";
  }

  // The reference: plain loops in double, one function per step.
  using Doubles = std::vector<double>;
  std::vector<std::vector<Doubles>> keys{kLayers}, vals{kLayers};

  Doubles matVec(const std::string &name, const Doubles &x) {
    const Vector &m = values[name];
    Doubles y(m.size() / x.size(), 0.0);
    for (size_t r = 0; r < y.size(); ++r)
      for (size_t c = 0; c < x.size(); ++c)
        y[r] += m[r * x.size() + c] * x[c];
    return y;
  }

  Doubles norm(const std::string &name, const Doubles &x) {
    double meanSquare = 0;
    for (double v : x)
      meanSquare += v * v / x.size();
    Doubles y;
    for (size_t i = 0; i < x.size(); ++i)
      y.push_back(x[i] / std::sqrt(meanSquare + kEps) * values[name][i]);
    return y;
  }

  Doubles rope(Doubles x, int64_t pos) {
    for (size_t head = 0; head < x.size(); head += kHeadDim)
      for (int64_t i = 0; i < kHeadDim / 2; ++i) {
        auto z = std::complex<double>(x[head + i], x[head + i + kHeadDim / 2]) *
                 std::polar(1.0, pos * double(invFreq[i]));
        x[head + i] = z.real();
        x[head + i + kHeadDim / 2] = z.imag();
      }
    return x;
  }

  Doubles attend(int layer, const Doubles &q) {
    Doubles out(q.size(), 0.0);
    for (int64_t head = 0; head < kHeads; ++head) {
      int64_t kvHead = head * kKvHeads / kHeads;
      Doubles scores;
      for (const Doubles &k : keys[layer]) {
        double s = 0;
        for (int64_t d = 0; d < kHeadDim; ++d)
          s += q[head * kHeadDim + d] * k[kvHead * kHeadDim + d];
        scores.push_back(s * kScale);
      }
      double total = 0;
      for (double s : scores)
        total += std::exp(s);
      for (size_t t = 0; t < scores.size(); ++t)
        for (int64_t d = 0; d < kHeadDim; ++d)
          out[head * kHeadDim + d] += std::exp(scores[t]) / total * vals[layer][t][kvHead * kHeadDim + d];
    }
    return out;
  }

  Doubles referenceStep(int64_t token, int64_t pos) {
    const Vector &embed = values["embed"];
    Doubles h(embed.begin() + token * kHidden, embed.begin() + (token + 1) * kHidden);
    for (int layer = 0; layer < kLayers; ++layer) {
      std::string p = "l" + std::to_string(layer) + "_";
      Doubles n = norm(p + "in_norm", h);
      Doubles q = matVec(p + "wq", n);
      for (size_t i = 0; i < q.size(); ++i)
        q[i] += values[p + "bq"][i];
      keys[layer].push_back(rope(matVec(p + "wk", n), pos));
      vals[layer].push_back(matVec(p + "wv", n));
      Doubles o = matVec(p + "wo", attend(layer, rope(q, pos)));
      for (size_t i = 0; i < h.size(); ++i)
        h[i] += o[i];
      Doubles m = norm(p + "post_norm", h);
      Doubles g = matVec(p + "wg", m), u = matVec(p + "wu", m), s(kFfn);
      for (int64_t i = 0; i < kFfn; ++i)
        s[i] = g[i] * sigmoid(g[i]) * u[i];
      Doubles d = matVec(p + "wd", s);
      for (size_t i = 0; i < h.size(); ++i)
        h[i] += d[i];
    }
    return matVec("lm_head", norm("final_norm", h));
  }
};

TEST_F(TinyModelTest, LogitsMatchADirectImplementationOverSeveralSteps) {
  parse(buildModel());
  auto interpreter = create(8);
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);
  const std::vector<int64_t> tokens = {3, 7, 0, 10, 3, 3};
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    auto logits = (*interpreter)->step(tokens[pos]);
    ASSERT_TRUE(bool(logits)) << errorMessage(logits);
    SCOPED_TRACE("position " + std::to_string(pos));
    expectClose(*logits, referenceStep(tokens[pos], pos), 1e-5);
  }
}

// --- errors ---------------------------------------------------------------

const char *kLinearModule = "mk.weight @x : tensor<1x2xf32>\n"
                            "mk.weight @w : tensor<3x2xf32>\n"
                            "func.func @decode_step(%token: i64, %pos: index) -> "
                            "(tensor<3xf32>, i64) {\n"
                            "  %x = mk.embedding @x[%token] : tensor<2xf32>\n"
                            "  %y = mk.linear %x weight @w : tensor<2xf32> -> tensor<3xf32>\n"
                            "  %t = mk.argmax %y : tensor<3xf32>\n"
                            "  return %y, %t : tensor<3xf32>, i64\n"
                            "}\n";

TEST_F(InterpreterTest, ExceedingMaxContextIsAnError) {
  addWeight("x", {1, 2}, {1, 2});
  addWeight("w", {3, 2}, Vector(6, 1.0f));
  parse(kLinearModule);
  auto interpreter = create(2);
  ASSERT_TRUE(bool(interpreter)) << errorMessage(interpreter);
  for (int i = 0; i < 2; ++i) {
    auto result = (*interpreter)->step(0);
    ASSERT_TRUE(bool(result)) << errorMessage(result);
  }
  auto third = (*interpreter)->step(0);
  std::string message = errorMessage(third);
  EXPECT_NE(message.find("context is full"), std::string::npos) << message;
  EXPECT_EQ((*interpreter)->position(), 2);
}

TEST_F(InterpreterTest, MissingWeightIsAnErrorNamingOpAndWeight) {
  addWeight("x", {1, 2}, {1, 2});
  parse(kLinearModule);
  auto interpreter = create();
  std::string message = errorMessage(interpreter);
  EXPECT_NE(message.find("mk.linear"), std::string::npos) << message;
  EXPECT_NE(message.find("'w' is not in the weight table"), std::string::npos) << message;
}

TEST_F(InterpreterTest, WeightOfWrongSizeIsAnError) {
  addWeight("x", {1, 2}, {1, 2});
  addWeight("w", {3, 2}, Vector(5, 1.0f));
  parse(kLinearModule);
  auto interpreter = create();
  std::string message = errorMessage(interpreter);
  EXPECT_NE(message.find("mk.linear"), std::string::npos) << message;
  EXPECT_NE(message.find("5 values"), std::string::npos) << message;
}

TEST_F(InterpreterTest, WeightOfTransposedShapeIsAnError) {
  addWeight("x", {1, 2}, {1, 2});
  addWeight("w", {2, 3}, Vector(6, 1.0f));
  parse(kLinearModule);
  auto interpreter = create();
  std::string message = errorMessage(interpreter);
  EXPECT_NE(message.find("has shape [2, 3]"), std::string::npos) << message;
}

TEST_F(InterpreterTest, UnknownOpIsAnErrorNamingIt) {
  addWeight("x", {1, 2}, {1, 2});
  parse("mk.weight @x : tensor<1x2xf32>\n"
        "func.func private @helper(tensor<2xf32>) -> tensor<2xf32>\n"
        "func.func @decode_step(%token: i64, %pos: index) -> (tensor<2xf32>, i64) {\n"
        "  %x = mk.embedding @x[%token] : tensor<2xf32>\n"
        "  %y = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  %t = mk.argmax %y : tensor<2xf32>\n"
        "  return %y, %t : tensor<2xf32>, i64\n"
        "}\n");
  auto interpreter = create();
  std::string message = errorMessage(interpreter);
  EXPECT_NE(message.find("'func.call'"), std::string::npos) << message;
}

TEST_F(InterpreterTest, WrongSignaturesAreErrors) {
  // Declarations suffice: the signature is checked before the body.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(i32, index) -> (tensor<2xf32>, i64)", "the token, is not i64"},
      {"(i64, i64) -> (tensor<2xf32>, i64)", "the position, is not index"},
      {"(i64) -> (tensor<2xf32>, i64)", "lacks the token and position"},
      {"(i64, index, f32) -> (tensor<2xf32>, i64)", "argument 2 is not a !mk.kv_cache"},
      {"(i64, index) -> tensor<2xf32>", "exactly the logits and the next token"},
      {"(i64, index) -> (tensor<2x2xf32>, i64)", "result 0, the logits"},
      {"(i64, index) -> (tensor<2xf32>, index)", "result 1, the next token"},
  };
  for (const auto &[signature, expected] : cases) {
    parse("func.func private @decode_step" + signature + "\n");
    auto interpreter = create();
    std::string message = errorMessage(interpreter);
    EXPECT_NE(message.find(expected), std::string::npos) << signature << ": " << message;
  }
}

TEST_F(InterpreterTest, ModuleWithoutDecodeStepBodyOrFunctionIsAnError) {
  parse("func.func private @decode_step(i64, index) -> (tensor<2xf32>, i64)\n");
  auto declared = create();
  EXPECT_NE(errorMessage(declared).find("has no body"), std::string::npos);

  parse("func.func private @other(i64, index) -> (tensor<2xf32>, i64)\n");
  auto missing = create();
  EXPECT_NE(errorMessage(missing).find("no func.func @decode_step"), std::string::npos);
}

TEST_F(InterpreterTest, ModuleThatDoesNotVerifyIsAnError) {
  // The parser verifies, so break the IR afterwards: the linear now names a
  // weight of the wrong shape.
  addWeight("x", {1, 2}, {1, 2});
  addWeight("w", {3, 2}, Vector(6, 1.0f));
  addWeight("other", {4, 4}, Vector(16, 1.0f));
  parse(std::string("mk.weight @other : tensor<4x4xf32>\n") + kLinearModule);
  module->walk([&](mk::LinearOp linear) {
    linear.setWeightAttr(mlir::FlatSymbolRefAttr::get(&context, "other"));
  });
  auto interpreter = create();
  std::string message = errorMessage(interpreter);
  EXPECT_NE(message.find("does not verify"), std::string::npos) << message;
  EXPECT_NE(message.find("@other"), std::string::npos) << message;
}

TEST_F(InterpreterTest, NonPositiveMaxContextIsAnError) {
  addWeight("x", {1, 2}, {1, 2});
  addWeight("w", {3, 2}, Vector(6, 1.0f));
  parse(kLinearModule);
  auto interpreter = create(0);
  EXPECT_NE(errorMessage(interpreter).find("maxContext must be positive"), std::string::npos);
}

} // namespace
