#include "FusedModuleText.h"

#include "compiler/dialect/MkDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace mk::test {

namespace {

std::string vec(int64_t n) { return "tensor<" + std::to_string(n) + "xf32>"; }

class Writer {
public:
  explicit Writer(std::string dtype) : dtype(std::move(dtype)) {}

  std::string weight(const std::string &name, int64_t rows, int64_t cols = 0) {
    declarations << "  mk.weight @\"" << name << "\" : tensor<" << rows;
    if (cols)
      declarations << "x" << cols;
    declarations << "x" << dtype << ">\n";
    return "@\"" + name + "\"";
  }

  std::string dtype;
  std::ostringstream declarations, body;
};

// The plain theta = 10000 frequencies of `rotaryDim` rotated entries.
std::string invFreqAttribute(int64_t rotaryDim) {
  std::ostringstream invFreq;
  invFreq << std::scientific << "inv_freq = dense<[";
  for (int64_t i = 0; i < rotaryDim / 2; ++i)
    invFreq << (i ? ", " : "") << std::pow(10000.0, -2.0 * i / rotaryDim);
  invFreq << "]> : tensor<" << rotaryDim / 2 << "xf32>";
  return invFreq.str();
}

std::string headAttributes(const ModelShape &s) {
  std::ostringstream heads;
  heads << "num_heads = " << s.heads << " : i64, num_kv_heads = " << s.kvHeads
        << " : i64, head_dim = " << s.headDim << " : i64, scale = " << std::scientific
        << 1.0 / std::sqrt(static_cast<double>(s.headDim)) << " : f32";
  return heads.str();
}

std::string cacheType(const ModelShape &s) {
  return "!mk.kv_cache<" + std::to_string(s.kvHeads) + ", " + std::to_string(s.headDim) + ">";
}

// The module around a decode_step body that returns %logits and %next.
std::string moduleText(const ModelShape &s, const Writer &w) {
  std::ostringstream module;
  module << "module {\n"
         << w.declarations.str() << "  func.func @decode_step(%token: i64, %pos: index";
  for (int64_t layer = 0; layer < s.layers; ++layer)
    module << ", %cache" << layer << ": " << cacheType(s);
  module << ") -> (" << vec(s.vocab) << ", i64) {\n"
         << w.body.str() << "    %next = mk.argmax %logits : " << vec(s.vocab) << "\n"
         << "    return %logits, %next : " << vec(s.vocab) << ", i64\n  }\n}\n";
  return module.str();
}

} // namespace

ModelShape llama1bShape() {
  ModelShape shape;
  shape.hidden = 2048;
  shape.intermediate = 8192;
  shape.layers = 16;
  shape.heads = 32;
  shape.kvHeads = 8;
  shape.headDim = 64;
  shape.vocab = 128256;
  shape.tied = true;
  return shape;
}

std::string fusedModuleText(const ModelShape &s) {
  Writer w("bf16");
  int64_t qRows = s.heads * s.headDim, kvRows = s.kvHeads * s.headDim;
  int64_t qkvRows = qRows + 2 * kvRows;
  auto biases = [&](bool present, const std::string &list) {
    return present ? " biases [" + list + "]" : std::string();
  };

  std::string table = w.weight("embed", s.vocab, s.hidden);
  w.body << "    %x0 = mk.embedding " << table << "[%token] : " << vec(s.hidden) << "\n";
  std::string x = "%x0";
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    std::string p = "layer" + std::to_string(layer);
    // One statement per declaration: the order of the IR's weights is fixed.
    std::string weights = w.weight(p + ".wq", qRows, s.hidden);
    weights += ", " + w.weight(p + ".wk", kvRows, s.hidden);
    weights += ", " + w.weight(p + ".wv", kvRows, s.hidden);
    std::string qkvBiases;
    if (s.qkvBiases) {
      qkvBiases = w.weight(p + ".bq", qRows);
      qkvBiases += ", " + w.weight(p + ".bk", kvRows);
      qkvBiases += ", " + w.weight(p + ".bv", kvRows);
    }
    std::string norm = w.weight(p + ".input_norm", s.hidden);
    w.body << "    %" << p << "_qkv = mk.gemv " << x << " weights [" << weights << "]"
           << biases(s.qkvBiases, qkvBiases) << " norm " << norm
           << " {eps = 1.0e-05 : f32} : " << vec(s.hidden) << " -> " << vec(qkvRows) << "\n";
    std::string qkNorm, attributes = headAttributes(s);
    if (s.qkNorm) {
      qkNorm = " q_norm " + w.weight(p + ".q_norm", s.headDim);
      qkNorm += " k_norm " + w.weight(p + ".k_norm", s.headDim);
      attributes += ", norm_eps = 1.0e-06 : f32";
    }
    int64_t rotaryDim = s.rotatedDims();
    attributes += ", rotary_dim = " + std::to_string(rotaryDim) + " : i64";
    if (rotaryDim)
      attributes += ", " + invFreqAttribute(rotaryDim) + (s.interleaved ? ", interleaved" : "");
    w.body << "    %" << p << "_attn = mk.fused_attention %" << p << "_qkv cache %cache" << layer
           << " at %pos" << qkNorm << " {" << attributes << "} : " << vec(qkvRows) << ", "
           << cacheType(s) << " -> " << vec(qRows) << "\n";
    std::string wo = w.weight(p + ".wo", s.hidden, qRows);
    std::string bo = s.otherBiases ? w.weight(p + ".bo", s.hidden) : "";
    w.body << "    %" << p << "_h = mk.gemv %" << p << "_attn residual " << x << " weights ["
           << wo << "]" << biases(s.otherBiases, bo) << " {epilogue = \"residual\"} : "
           << vec(qRows) << ", " << vec(s.hidden) << " -> " << vec(s.hidden) << "\n";
    std::string gateUp = w.weight(p + ".w_gate", s.intermediate, s.hidden);
    gateUp += ", " + w.weight(p + ".w_up", s.intermediate, s.hidden);
    std::string gateUpBiases;
    if (s.otherBiases) {
      gateUpBiases = w.weight(p + ".b_gate", s.intermediate);
      gateUpBiases += ", " + w.weight(p + ".b_up", s.intermediate);
    }
    std::string postNorm = w.weight(p + ".post_norm", s.hidden);
    w.body << "    %" << p << "_mlp = mk.gemv %" << p << "_h weights [" << gateUp << "]"
           << biases(s.otherBiases, gateUpBiases) << " norm " << postNorm
           << " {epilogue = \"silu_mul\", eps = 1.0e-05 : f32} : " << vec(s.hidden) << " -> "
           << vec(s.intermediate) << "\n";
    std::string down = w.weight(p + ".w_down", s.hidden, s.intermediate);
    std::string downBias = s.otherBiases ? w.weight(p + ".b_down", s.hidden) : "";
    w.body << "    %" << p << "_out = mk.gemv %" << p << "_mlp residual %" << p << "_h weights ["
           << down << "]" << biases(s.otherBiases, downBias) << " {epilogue = \"residual\"} : "
           << vec(s.intermediate) << ", " << vec(s.hidden) << " -> " << vec(s.hidden) << "\n";
    x = "%" + p + "_out";
  }
  std::string head = s.tied ? table : w.weight("lm_head", s.vocab, s.hidden);
  w.body << "    %logits = mk.gemv " << x << " weights [" << head << "] norm "
         << w.weight("final_norm", s.hidden) << " {eps = 1.0e-05 : f32} : " << vec(s.hidden)
         << " -> " << vec(s.vocab) << "\n";
  return moduleText(s, w);
}

std::string unfusedModuleText(const ModelShape &s) {
  Writer w("f32");
  int64_t qRows = s.heads * s.headDim, kvRows = s.kvHeads * s.headDim;
  int64_t rotaryDim = s.rotatedDims();
  // `bias` names the bias weight, or is empty for none.
  auto linear = [&](const std::string &result, const std::string &input, int64_t in,
                    const std::string &weight, int64_t out, const std::string &bias) {
    std::string weightName = w.weight(weight, out, in);
    w.body << "    " << result << " = mk.linear " << input << " weight " << weightName;
    if (!bias.empty())
      w.body << " bias " << w.weight(bias, out);
    w.body << " : " << vec(in) << " -> " << vec(out) << "\n";
  };
  auto norm = [&](const std::string &result, const std::string &input, int64_t length,
                  const std::string &weight, const char *eps) {
    w.body << "    " << result << " = mk.rms_norm " << input << " weight "
           << w.weight(weight, length) << " {eps = " << eps << " : f32} : " << vec(length)
           << "\n";
  };
  // The per-head part of q or k: norm (one head: as the importer writes it,
  // or as a head norm), then rotary. Returns the value the attention reads.
  auto perHead = [&](const std::string &value, int64_t length, const std::string &normWeight) {
    std::string current = value;
    if (s.qkNorm) {
      if (length == s.headDim && s.oneHeadNormAsRmsNorm) {
        norm(value + "n", current, length, normWeight, "1.0e-06");
      } else {
        w.body << "    " << value << "n = mk.head_rms_norm " << current << " weight "
               << w.weight(normWeight, s.headDim) << " {eps = 1.0e-06 : f32, head_dim = "
               << s.headDim << " : i64} : " << vec(length) << "\n";
      }
      current = value + "n";
    }
    if (rotaryDim) {
      w.body << "    " << value << "r = mk.rotary " << current << " at %pos {head_dim = "
             << s.headDim << " : i64, rotary_dim = " << rotaryDim << " : i64, "
             << invFreqAttribute(rotaryDim) << (s.interleaved ? ", interleaved" : "") << "} : "
             << vec(length) << "\n";
      current = value + "r";
    }
    return current;
  };

  std::string table = w.weight("embed", s.vocab, s.hidden);
  w.body << "    %x0 = mk.embedding " << table << "[%token] : " << vec(s.hidden) << "\n";
  std::string x = "%x0";
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    std::string p = "layer" + std::to_string(layer), v = "%" + p;
    norm(v + "_n", x, s.hidden, p + ".input_norm", "1.0e-05");
    auto qkvBias = [&](const char *name) { return s.qkvBiases ? p + name : std::string(); };
    auto otherBias = [&](const char *name) { return s.otherBiases ? p + name : std::string(); };
    linear(v + "_q", v + "_n", s.hidden, p + ".wq", qRows, qkvBias(".bq"));
    linear(v + "_k", v + "_n", s.hidden, p + ".wk", kvRows, qkvBias(".bk"));
    linear(v + "_v", v + "_n", s.hidden, p + ".wv", kvRows, qkvBias(".bv"));
    std::string q = perHead(v + "_q", qRows, p + ".q_norm");
    std::string k = perHead(v + "_k", kvRows, p + ".k_norm");
    w.body << "    " << v << "_attn = mk.attention " << q << ", " << k << ", " << v
           << "_v cache %cache" << layer << " at %pos {" << headAttributes(s) << "} : "
           << vec(qRows) << ", " << vec(kvRows) << ", " << vec(kvRows) << ", " << cacheType(s)
           << " -> " << vec(qRows) << "\n";
    linear(v + "_o", v + "_attn", qRows, p + ".wo", s.hidden, otherBias(".bo"));
    w.body << "    " << v << "_h = mk.add " << x << ", " << v << "_o : " << vec(s.hidden) << "\n";
    norm(v + "_p", v + "_h", s.hidden, p + ".post_norm", "1.0e-05");
    linear(v + "_g", v + "_p", s.hidden, p + ".w_gate", s.intermediate, otherBias(".b_gate"));
    linear(v + "_u", v + "_p", s.hidden, p + ".w_up", s.intermediate, otherBias(".b_up"));
    w.body << "    " << v << "_m = mk.silu_mul " << v << "_g, " << v << "_u : "
           << vec(s.intermediate) << "\n";
    linear(v + "_d", v + "_m", s.intermediate, p + ".w_down", s.hidden, otherBias(".b_down"));
    w.body << "    " << v << "_out = mk.add " << v << "_h, " << v << "_d : " << vec(s.hidden)
           << "\n";
    x = v + "_out";
  }
  norm("%final", x, s.hidden, "final_norm", "1.0e-05");
  std::string head = s.tied ? table : w.weight("lm_head", s.vocab, s.hidden);
  w.body << "    %logits = mk.logits %final weight " << head << " : " << vec(s.hidden) << " -> "
         << vec(s.vocab) << "\n";
  return moduleText(s, w);
}

mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context,
                                              const std::string &text) {
  context.loadDialect<MkDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << "the module does not parse:\n" << text;
  return module;
}

} // namespace mk::test
