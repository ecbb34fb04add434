// Each fused op, run by the reference interpreter, against the unfused ops it
// stands for, on the same weights and inputs: mk.gemv (norm, stacked weights
// and biases, each epilogue), mk.slice, and mk.fused_attention (q/k norm,
// rotary of each layout, over several positions of the cache). The fused
// kernels run the unfused ones in the same order, so the logits must be
// equal, not merely close: any difference is a change of meaning.
#include "compiler/interpreter/ReferenceInterpreter.h"

#include "compiler/dialect/MkDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using Vector = std::vector<float>;

std::string tensor(int64_t length) { return "tensor<" + std::to_string(length) + "xf32>"; }

Vector randomVector(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Vector values(size);
  for (float &value : values)
    value = uniform(generator);
  return values;
}

// Inputs are rows of @x [kSteps, width], one per step, so that every step
// of a cached op sees a different token.
constexpr int64_t kSteps = 5;

class FusedOpsTest : public ::testing::Test {
protected:
  FusedOpsTest() { context.loadDialect<mk::MkDialect, mlir::func::FuncDialect>(); }

  // A weight of random values, declared in every module this test builds.
  void addWeight(const std::string &name, std::vector<int64_t> shape) {
    mk::Weight weight;
    weight.name = name;
    weight.shape = shape;
    int64_t size = 1;
    for (int64_t dim : shape)
      size *= dim;
    weight.values = randomVector(size, ++seed);
    weights.add(std::move(weight));
    std::string type = "tensor<";
    for (int64_t dim : shape)
      type += std::to_string(dim) + "x";
    declarations += "mk.weight @" + name + " : " + type + "f32>\n";
  }

  // A decode_step whose input %x is row %token of @x; `body` defines %y of
  // yLength entries, returned as the logits. `cache` is a !mk.kv_cache type
  // or empty.
  std::string module(int64_t width, int64_t yLength, const std::string &body,
                     const std::string &cache = "") {
    return declarations + "func.func @decode_step(%token: i64, %pos: index" +
           (cache.empty() ? "" : ", %cache: " + cache) + ") -> (" + tensor(yLength) +
           ", i64) {\n  %x = mk.embedding @x[%token] : " + tensor(width) + "\n" + body +
           "  %t = mk.argmax %y : " + tensor(yLength) + "\n  return %y, %t : " + tensor(yLength) +
           ", i64\n}\n";
  }

  // The logits of every step, tokens 0..kSteps-1 at positions 0..kSteps-1.
  std::vector<Vector> run(const std::string &source) {
    auto parsed = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!parsed) {
      ADD_FAILURE() << "cannot parse:\n" << source;
      return {};
    }
    auto interpreter = mk::ReferenceInterpreter::create(*parsed, weights, kSteps);
    if (!interpreter) {
      ADD_FAILURE() << llvm::toString(interpreter.takeError());
      return {};
    }
    std::vector<Vector> steps;
    for (int64_t token = 0; token < kSteps; ++token) {
      auto logits = (*interpreter)->step(token);
      if (!logits) {
        ADD_FAILURE() << llvm::toString(logits.takeError());
        return {};
      }
      steps.push_back(std::move(*logits));
    }
    return steps;
  }

  void expectSameLogits(const std::string &fused, const std::string &unfused) {
    std::vector<Vector> actual = run(fused), expected = run(unfused);
    ASSERT_EQ(actual.size(), static_cast<size_t>(kSteps));
    ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
    for (int64_t step = 0; step < kSteps; ++step)
      EXPECT_EQ(actual[step], expected[step]) << "at step " << step;
  }

  mlir::MLIRContext context;
  mk::WeightTable weights;
  std::string declarations;
  unsigned seed = 0;
};

// --- gemv -----------------------------------------------------------------

// 13 inputs: not a multiple of any unrolling, so a remainder loop is needed.
constexpr int64_t kIn = 13;

struct Projection {
  std::string weight, bias;
  int64_t rows;
};

class GemvTest : public FusedOpsTest {
protected:
  GemvTest() {
    addWeight("x", {kSteps, kIn});
    addWeight("ln", {kIn});
    for (const Projection &part : parts) {
      addWeight(part.weight, {part.rows, kIn});
      addWeight(part.bias, {part.rows});
    }
  }

  // Each part of a stacked gemv, taken out by mk.slice, against the linear
  // it stands for.
  void expectPartsAreLinears(bool norm, bool biases) {
    std::string weightList, biasList;
    int64_t total = 0;
    for (const Projection &part : parts) {
      weightList += (total ? ", @" : "@") + part.weight;
      biasList += (total ? ", @" : "@") + part.bias;
      total += part.rows;
    }
    std::string stacked = "  %g = mk.gemv %x weights [" + weightList + "]" +
                          (biases ? " biases [" + biasList + "]" : "") +
                          (norm ? " norm @ln {eps = 1.0e-01 : f32}" : "") + " : " + tensor(kIn) +
                          " -> " + tensor(total) + "\n";
    std::string normed =
        norm ? "  %n = mk.rms_norm %x weight @ln {eps = 1.0e-01 : f32} : " + tensor(kIn) + "\n"
             : "";
    int64_t offset = 0;
    for (const Projection &part : parts) {
      SCOPED_TRACE("part @" + part.weight);
      std::string fused = stacked + "  %y = mk.slice %g {offset = " + std::to_string(offset) +
                          " : i64} : " + tensor(total) + " -> " + tensor(part.rows) + "\n";
      std::string unfused = normed + "  %y = mk.linear " + (norm ? "%n" : "%x") + " weight @" +
                            part.weight + (biases ? " bias @" + part.bias : "") + " : " +
                            tensor(kIn) + " -> " + tensor(part.rows) + "\n";
      expectSameLogits(module(kIn, part.rows, fused), module(kIn, part.rows, unfused));
      offset += part.rows;
    }
  }

  // Unequal rows, as q, k, v are under GQA.
  std::vector<Projection> parts = {{"wq", "bq", 6}, {"wk", "bk", 3}, {"wv", "bv", 3}};
};

TEST_F(GemvTest, StackedNormalizedProjectionsWithBiasesAreTheLinears) {
  // An eps of 0.1 against inputs of order 1 makes a norm that forgets eps,
  // or adds it outside the square root, differ.
  expectPartsAreLinears(/*norm=*/true, /*biases=*/true);
}

TEST_F(GemvTest, StackedPlainProjectionsAreTheLinears) {
  expectPartsAreLinears(/*norm=*/false, /*biases=*/false);
}

TEST_F(FusedOpsTest, SiluMulEpilogueIsSiluOfGateTimesUp) {
  addWeight("x", {kSteps, kIn});
  addWeight("ln", {kIn});
  addWeight("wg", {7, kIn});
  addWeight("wu", {7, kIn});
  std::string fused = "  %y = mk.gemv %x weights [@wg, @wu] norm @ln {epilogue = \"silu_mul\", "
                      "eps = 1.0e-05 : f32} : " +
                      tensor(kIn) + " -> " + tensor(7) + "\n";
  std::string unfused = "  %n = mk.rms_norm %x weight @ln {eps = 1.0e-05 : f32} : " + tensor(kIn) +
                        "\n" + "  %g = mk.linear %n weight @wg : " + tensor(kIn) + " -> " +
                        tensor(7) + "\n" + "  %u = mk.linear %n weight @wu : " + tensor(kIn) +
                        " -> " + tensor(7) + "\n" + "  %y = mk.silu_mul %g, %u : " + tensor(7) +
                        "\n";
  expectSameLogits(module(kIn, 7, fused), module(kIn, 7, unfused));
}

TEST_F(FusedOpsTest, ResidualEpilogueAddsTheResidual) {
  addWeight("x", {kSteps, kIn});
  addWeight("r", {kSteps, 5});
  addWeight("wo", {5, kIn});
  addWeight("bo", {5});
  std::string residual = "  %r = mk.embedding @r[%token] : " + tensor(5) + "\n";
  std::string fused = residual +
                      "  %y = mk.gemv %x residual %r weights [@wo] biases [@bo] "
                      "{epilogue = \"residual\"} : " +
                      tensor(kIn) + ", " + tensor(5) + " -> " + tensor(5) + "\n";
  std::string unfused = residual + "  %o = mk.linear %x weight @wo bias @bo : " + tensor(kIn) +
                        " -> " + tensor(5) + "\n  %y = mk.add %r, %o : " + tensor(5) + "\n";
  expectSameLogits(module(kIn, 5, fused), module(kIn, 5, unfused));
}

// --- slice ----------------------------------------------------------------

TEST_F(FusedOpsTest, SliceTakesTheEntriesFromItsOffset) {
  addWeight("x", {kSteps, kIn});
  std::vector<Vector> steps = run(
      module(kIn, 6,
             "  %y = mk.slice %x {offset = 4 : i64} : " + tensor(kIn) + " -> " + tensor(6) + "\n"));
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
  const Vector &table = weights.find("x")->values;
  for (int64_t token = 0; token < kSteps; ++token)
    EXPECT_EQ(steps[token],
              Vector(table.begin() + token * kIn + 4, table.begin() + token * kIn + 10));
}

// --- fused attention ------------------------------------------------------

struct AttentionCase {
  bool qNorm, kNorm;
  int64_t rotaryDim; // 0: no rotary
  bool interleaved;
};

void PrintTo(const AttentionCase &c, std::ostream *os) {
  *os << "q_norm " << c.qNorm << ", k_norm " << c.kNorm << ", rotary_dim " << c.rotaryDim
      << (c.interleaved ? ", interleaved" : "");
}

// GQA: 4 query heads over 2 KV heads of 8; qkv holds q(32) | k(16) | v(16).
constexpr int64_t kHeads = 4, kKvHeads = 2, kHeadDim = 8;
constexpr int64_t kQLength = kHeads * kHeadDim, kKvLength = kKvHeads * kHeadDim;
constexpr int64_t kQkvLength = kQLength + 2 * kKvLength;

class FusedAttentionTest : public FusedOpsTest,
                           public ::testing::WithParamInterface<AttentionCase> {
protected:
  FusedAttentionTest() {
    addWeight("x", {kSteps, kQkvLength});
    addWeight("qn", {kHeadDim});
    addWeight("kn", {kHeadDim});
  }

  // inv_freq as an attribute: exactly representable frequencies, so that the
  // text round trip cannot move them.
  static std::string invFreq(int64_t rotaryDim) {
    std::string values;
    double frequency = 1.0;
    for (int64_t i = 0; i < rotaryDim / 2; ++i, frequency /= 4)
      values += (i ? ", " : "") + std::to_string(frequency);
    return "inv_freq = dense<[" + values + "]> : tensor<" + std::to_string(rotaryDim / 2) + "xf32>";
  }

  std::string cache() const {
    return "!mk.kv_cache<" + std::to_string(kKvHeads) + ", " + std::to_string(kHeadDim) + ">";
  }

  std::string heads() const {
    return "num_heads = " + std::to_string(kHeads) +
           " : i64, num_kv_heads = " + std::to_string(kKvHeads) +
           " : i64, head_dim = " + std::to_string(kHeadDim) + " : i64, scale = 3.5e-01 : f32";
  }

  std::string fused(const AttentionCase &c) const {
    std::string attributes = heads() + ", rotary_dim = " + std::to_string(c.rotaryDim) + " : i64";
    if (c.rotaryDim)
      attributes += ", " + invFreq(c.rotaryDim) + (c.interleaved ? ", interleaved" : "");
    if (c.qNorm || c.kNorm)
      attributes += ", norm_eps = 1.0e-02 : f32";
    return "  %y = mk.fused_attention %x cache %cache at %pos" +
           std::string(c.qNorm ? " q_norm @qn" : "") + (c.kNorm ? " k_norm @kn" : "") + " {" +
           attributes + "} : " + tensor(kQkvLength) + ", " + cache() + " -> " + tensor(kQLength) +
           "\n";
  }

  // slice -> (head_rms_norm ->) (rotary ->) attention, as the importer emits.
  std::string unfused(const AttentionCase &c) const {
    std::string body;
    auto headInput = [&](const std::string &name, int64_t offset, int64_t length, bool norm,
                         const std::string &normWeight, bool rotate) {
      std::string value = "%" + name;
      body += "  " + value + " = mk.slice %x {offset = " + std::to_string(offset) +
              " : i64} : " + tensor(kQkvLength) + " -> " + tensor(length) + "\n";
      if (norm) {
        body += "  " + value + "n = mk.head_rms_norm " + value + " weight @" + normWeight +
                " {eps = 1.0e-02 : f32, head_dim = " + std::to_string(kHeadDim) +
                " : i64} : " + tensor(length) + "\n";
        value += "n";
      }
      if (rotate && c.rotaryDim) {
        body += "  " + value + "r = mk.rotary " + value +
                " at %pos {head_dim = " + std::to_string(kHeadDim) +
                " : i64, rotary_dim = " + std::to_string(c.rotaryDim) + " : i64, " +
                invFreq(c.rotaryDim) + (c.interleaved ? ", interleaved" : "") +
                "} : " + tensor(length) + "\n";
        value += "r";
      }
      return value;
    };
    std::string q = headInput("q", 0, kQLength, c.qNorm, "qn", true);
    std::string k = headInput("k", kQLength, kKvLength, c.kNorm, "kn", true);
    std::string v = headInput("v", kQLength + kKvLength, kKvLength, false, "", false);
    return body + "  %y = mk.attention " + q + ", " + k + ", " + v + " cache %cache at %pos {" +
           heads() + "} : " + tensor(kQLength) + ", " + tensor(kKvLength) + ", " +
           tensor(kKvLength) + ", " + cache() + " -> " + tensor(kQLength) + "\n";
  }
};

TEST_P(FusedAttentionTest, IsNormRotaryThenAttention) {
  const AttentionCase &c = GetParam();
  expectSameLogits(module(kQkvLength, kQLength, fused(c), cache()),
                   module(kQkvLength, kQLength, unfused(c), cache()));
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, FusedAttentionTest,
    ::testing::Values(AttentionCase{true, true, 8, false}, AttentionCase{false, false, 8, true},
                      AttentionCase{true, false, 4, false}, AttentionCase{false, true, 4, true},
                      AttentionCase{false, false, 0, false}, AttentionCase{true, true, 0, false}),
    [](const ::testing::TestParamInfo<AttentionCase> &info) {
      const AttentionCase &c = info.param;
      return std::string(c.qNorm ? "QNorm" : "") + (c.kNorm ? "KNorm" : "") + "Rotary" +
             std::to_string(c.rotaryDim) + (c.interleaved ? "Interleaved" : "");
    });

} // namespace
