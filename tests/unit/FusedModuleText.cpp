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
  std::string weight(const std::string &name, int64_t rows, int64_t cols = 0) {
    declarations << "  mk.weight @\"" << name << "\" : tensor<" << rows;
    if (cols)
      declarations << "x" << cols;
    declarations << "xbf16>\n";
    return "@\"" + name + "\"";
  }

  std::ostringstream declarations, body;
};

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
  Writer w;
  int64_t qRows = s.heads * s.headDim, kvRows = s.kvHeads * s.headDim;
  int64_t qkvRows = qRows + 2 * kvRows;
  std::ostringstream invFreq;
  invFreq << std::scientific;
  for (int64_t i = 0; i < s.headDim / 2; ++i)
    invFreq << (i ? ", " : "") << std::pow(10000.0, -2.0 * i / s.headDim);

  std::string table = w.weight("embed", s.vocab, s.hidden);
  w.body << "    %x0 = mk.embedding " << table << "[%token] : " << vec(s.hidden) << "\n";
  std::string x = "%x0";
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    std::string p = "layer" + std::to_string(layer);
    // One statement per declaration: the order of the IR's weights is fixed.
    std::string weights = w.weight(p + ".wq", qRows, s.hidden);
    weights += ", " + w.weight(p + ".wk", kvRows, s.hidden);
    weights += ", " + w.weight(p + ".wv", kvRows, s.hidden);
    std::string biases;
    if (s.qkvBiases) {
      biases = " biases [" + w.weight(p + ".bq", qRows);
      biases += ", " + w.weight(p + ".bk", kvRows);
      biases += ", " + w.weight(p + ".bv", kvRows) + "]";
    }
    std::string norm = w.weight(p + ".input_norm", s.hidden);
    w.body << "    %" << p << "_qkv = mk.gemv " << x << " weights [" << weights << "]" << biases
           << " norm " << norm << " {eps = 1.0e-05 : f32} : " << vec(s.hidden) << " -> "
           << vec(qkvRows) << "\n";
    std::string qkNorm, normEps;
    if (s.qkNorm) {
      qkNorm = " q_norm " + w.weight(p + ".q_norm", s.headDim);
      qkNorm += " k_norm " + w.weight(p + ".k_norm", s.headDim);
      normEps = "norm_eps = 1.0e-06 : f32, ";
    }
    w.body << "    %" << p << "_attn = mk.fused_attention %" << p << "_qkv cache %cache" << layer
           << " at %pos" << qkNorm << " {" << normEps << "head_dim = " << s.headDim
           << " : i64, inv_freq = dense<[" << invFreq.str() << "]> : tensor<" << s.headDim / 2
           << "xf32>, num_heads = " << s.heads << " : i64, num_kv_heads = " << s.kvHeads
           << " : i64, rotary_dim = " << s.headDim << " : i64, scale = 0.125 : f32} : "
           << vec(qkvRows) << ", !mk.kv_cache<" << s.kvHeads << ", " << s.headDim << "> -> "
           << vec(qRows) << "\n";
    w.body << "    %" << p << "_h = mk.gemv %" << p << "_attn residual " << x << " weights ["
           << w.weight(p + ".wo", s.hidden, qRows) << "] {epilogue = \"residual\"} : "
           << vec(qRows) << ", " << vec(s.hidden) << " -> " << vec(s.hidden) << "\n";
    std::string gateUp = w.weight(p + ".w_gate", s.intermediate, s.hidden);
    gateUp += ", " + w.weight(p + ".w_up", s.intermediate, s.hidden);
    w.body << "    %" << p << "_mlp = mk.gemv %" << p << "_h weights [" << gateUp << "] norm "
           << w.weight(p + ".post_norm", s.hidden)
           << " {epilogue = \"silu_mul\", eps = 1.0e-05 : f32} : " << vec(s.hidden) << " -> "
           << vec(s.intermediate) << "\n";
    w.body << "    %" << p << "_out = mk.gemv %" << p << "_mlp residual %" << p << "_h weights ["
           << w.weight(p + ".w_down", s.hidden, s.intermediate)
           << "] {epilogue = \"residual\"} : " << vec(s.intermediate) << ", " << vec(s.hidden)
           << " -> " << vec(s.hidden) << "\n";
    x = "%" + p + "_out";
  }
  std::string head = s.tied ? table : w.weight("lm_head", s.vocab, s.hidden);
  w.body << "    %logits = mk.gemv " << x << " weights [" << head << "] norm "
         << w.weight("final_norm", s.hidden) << " {eps = 1.0e-05 : f32} : " << vec(s.hidden)
         << " -> " << vec(s.vocab) << "\n"
         << "    %next = mk.argmax %logits : " << vec(s.vocab) << "\n"
         << "    return %logits, %next : " << vec(s.vocab) << ", i64\n";

  std::ostringstream module;
  module << "module {\n"
         << w.declarations.str() << "  func.func @decode_step(%token: i64, %pos: index";
  for (int64_t layer = 0; layer < s.layers; ++layer)
    module << ", %cache" << layer << ": !mk.kv_cache<" << s.kvHeads << ", " << s.headDim << ">";
  module << ") -> (" << vec(s.vocab) << ", i64) {\n" << w.body.str() << "  }\n}\n";
  return module.str();
}

mlir::OwningOpRef<mlir::ModuleOp> parseModule(mlir::MLIRContext &context,
                                              const std::string &text) {
  context.loadDialect<MkDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << "the module does not parse:\n" << text;
  return module;
}

} // namespace mk::test
