// Builds the decode step op by op from the hyperparameters, in the order and
// form the ONNX importer emits for the same model (docs: frontends/gguf/
// README.md), so that the fusion passes and everything after see one IR
// whatever the file was:
//
//   embedding; per layer: rms_norm, q/k/v linears (biases for qwen2, per-head
//   q/k norms for qwen3), rotary on q and k, attention, o_proj, add, rms_norm,
//   gate and up linears, silu_mul (gelu_tanh_mul for gemma), down, add
//   (gemma3: an rms_norm of attention's and the MLP's outputs before their
//   adds, and its sliding layers' windows and rotary frequencies; smollm3:
//   no rotary in every fourth layer; exaone4: those norms after, none
//   before); the
//   final rms_norm, logits (on token_embd when there is no output.weight),
//   argmax. phi3's fused attn_qkv and ffn_up are read as the linears' row
//   blocks, and the factors granite and gemma multiply by in llama.cpp's graph
//   are folded into the weights that make the scaled vectors, as the ONNX
//   importer folds them.
#include "frontends/gguf/import/GgufImporter.h"
#include "frontends/gguf/import/GgufTokenizer.h"

#include "compiler/dialect/MkDialect.h"
#include "frontends/gguf/GgufDecoder.h"
#include "frontends/gguf/GgufTypes.h"
#include "frontends/gguf/GgufWeights.h"
#include "core/weights/ScaledValues.h"
#include "core/weights/SlicedValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace mk {

namespace {

struct GgufImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Which part of a tensor a weight is, and a factor folded into it: rows
// [rowBegin, rowEnd) of its [out, in] matrix (rowEnd 0: all of them).
struct Part {
  uint64_t rowBegin = 0, rowEnd = 0;
  double factor = 1.0;
};

class GgufBuilder {
public:
  GgufBuilder(mlir::MLIRContext &context, std::shared_ptr<const GgufFile> shared,
              const GgufDecoderConfig &config, WeightTable &weights)
      : builder(&context), loc(builder.getUnknownLoc()), file(*shared), shared(shared),
        config(config), weights(weights) {}

  mlir::OwningOpRef<mlir::ModuleOp> build();

private:
  using Dims = std::vector<uint64_t>;
  // The mk.weight of tensor `name`, read with ggml dims `dims` (a linear
  // weight [out, in] is ne = [in, out]); q and k rows of permuting
  // architectures are put back in HF's order over `permuteHeads` heads.
  mlir::FlatSymbolRefAttr weight(const std::string &name, const Dims &dims,
                                 const std::string &what, int64_t permuteHeads = 0,
                                 Part part = {});
  mlir::Value linear(mlir::Value input, const std::string &name, int64_t in, int64_t out,
                     const std::string &what, const std::string &biasName = "",
                     int64_t permuteHeads = 0, double factor = 1.0);
  // Rows [begin, begin + out) of the fused [rows, in] tensor `name`, as a linear.
  mlir::Value linearRows(mlir::Value input, const std::string &name, int64_t in, int64_t rows,
                         int64_t begin, int64_t out, const std::string &what);
  mlir::Value rmsNorm(mlir::Value input, const std::string &name, const std::string &what);
  // `sliding`: with the sliding layers' frequencies (gemma3).
  mlir::Value rotary(mlir::Value input, int64_t length, bool sliding);
  mlir::Value layer(int64_t index, mlir::Value x);
  mlir::RankedTensorType vector(int64_t length) {
    return mlir::RankedTensorType::get({length}, builder.getF32Type());
  }
  std::string key(const std::string &suffix) const { return config.architecture + "." + suffix; }

  mlir::OpBuilder builder;
  mlir::Location loc;
  const GgufFile &file;
  std::shared_ptr<const GgufFile> shared; // kept alive by the lazy weights
  const GgufDecoderConfig &config;
  WeightTable &weights;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp function;
  std::set<std::string> used; // tensors read, so that none is silently ignored
  std::string nonFinite;      // the first tensor holding a NaN or infinity
};

mlir::FlatSymbolRefAttr GgufBuilder::weight(const std::string &name, const Dims &dims,
                                            const std::string &what, int64_t permuteHeads,
                                            Part part) {
  Weight w;
  w.name = name;
  // mk weights are [out, in] row-major: ggml's dims reversed.
  w.shape.assign(dims.rbegin(), dims.rend());
  GgufMatrix matrix;
  const GgufTensor *tensor = file.findTensor(name);
  // A big matrix is dequantized when the .mk is written, a row at a time
  // from the mapping (its NaNs found there); the rest now.
  if (tensor && tensor->dims == dims &&
      static_cast<int64_t>(tensor->elements) >= lazyWeightElements())
    w.source = ggufRowValues(shared, *tensor, permuteHeads, config.headDim);
  if (w.source) {
    matrix.typeCode = tensor->typeCode;
  } else {
    if (std::string error = readGgufTensor(file, name, dims, what, matrix); !error.empty())
      throw GgufImportError(error);
    if (nonFinite.empty())
      nonFinite = describeNonFinite(matrix.values, "tensor '" + name + "'");
    if (permuteHeads)
      unpermuteRotaryRows(matrix.values, permuteHeads, config.headDim,
                          w.shape.size() == 2 ? w.shape[1] : 1);
    w.values = std::move(matrix.values);
  }
  // The part asked for: its rows, then its factor, lazily where the tensor is.
  const uint64_t rows = w.shape.empty() ? 1 : w.shape[0];
  const uint64_t cols = w.shape.size() == 2 ? w.shape[1] : 1;
  if (part.rowEnd != 0 && (part.rowBegin != 0 || part.rowEnd != rows)) {
    if (w.source)
      w.source = slicedValues(w.source, cols, part.rowBegin, 0, cols);
    else
      w.values = std::vector<float>(w.values.begin() + part.rowBegin * cols,
                                    w.values.begin() + part.rowEnd * cols);
    w.shape[0] = part.rowEnd - part.rowBegin;
    w.name = rowsWeightName(w.name, part.rowBegin, part.rowEnd);
  }
  if (part.factor != 1.0) {
    if (w.source)
      w.source = scaledValues(w.source, part.factor);
    else
      for (float &value : w.values)
        value = static_cast<float>(value * part.factor);
    w.name = scaledWeightName(w.name, part.factor);
  }
  used.insert(name);
  // Plain float types keep their width (the .mk rounds to bf16 either
  // way); quantized ones were dequantized to f32.
  mlir::Type element = builder.getF32Type();
  if (matrix.typeCode == static_cast<uint32_t>(GgmlType::F16)) {
    w.storage = StorageType::F16;
    element = builder.getF16Type();
  } else if (matrix.typeCode == static_cast<uint32_t>(GgmlType::BF16)) {
    w.storage = StorageType::BF16;
    element = builder.getBF16Type();
  }
  auto type = mlir::RankedTensorType::get(w.shape, element);
  std::string symbol = weights.add(std::move(w));
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(function);
  builder.create<WeightOp>(loc, builder.getStringAttr(symbol), mlir::TypeAttr::get(type),
                           builder.getStringAttr(name));
  return mlir::FlatSymbolRefAttr::get(builder.getContext(), symbol);
}

mlir::Value GgufBuilder::linear(mlir::Value input, const std::string &name, int64_t in,
                                int64_t out, const std::string &what,
                                const std::string &biasName, int64_t permuteHeads,
                                double factor) {
  auto w = weight(name, {static_cast<uint64_t>(in), static_cast<uint64_t>(out)}, what,
                  permuteHeads, {0, 0, factor});
  mlir::FlatSymbolRefAttr bias;
  if (!biasName.empty())
    bias = weight(biasName, {static_cast<uint64_t>(out)}, "the bias of " + name, permuteHeads,
                  {0, 0, factor});
  return builder.create<LinearOp>(loc, vector(out), input, w, bias).getResult();
}

mlir::Value GgufBuilder::linearRows(mlir::Value input, const std::string &name, int64_t in,
                                    int64_t rows, int64_t begin, int64_t out,
                                    const std::string &what) {
  auto w = weight(name, {static_cast<uint64_t>(in), static_cast<uint64_t>(rows)}, what, 0,
                  {static_cast<uint64_t>(begin), static_cast<uint64_t>(begin + out)});
  return builder.create<LinearOp>(loc, vector(out), input, w, nullptr).getResult();
}

mlir::Value GgufBuilder::rmsNorm(mlir::Value input, const std::string &name,
                                 const std::string &what) {
  auto length = input.getType().cast<mlir::RankedTensorType>().getDimSize(0);
  auto w = weight(name, {static_cast<uint64_t>(length)}, what);
  return builder.create<RMSNormOp>(loc, input.getType(), input, w,
                                   builder.getF32FloatAttr(config.rmsEps))
      .getResult();
}

mlir::Value GgufBuilder::rotary(mlir::Value input, int64_t length, bool sliding) {
  const std::vector<float> &frequencies = sliding ? config.slidingInvFreq : config.invFreq;
  const std::optional<double> &theta = sliding ? config.slidingRopeTheta : config.ropeTheta;
  auto freqType = mlir::RankedTensorType::get({static_cast<int64_t>(frequencies.size())},
                                              builder.getF32Type());
  return builder
      .create<RotaryOp>(loc, vector(length), input, function.getArgument(1),
                        builder.getI64IntegerAttr(config.headDim),
                        builder.getI64IntegerAttr(config.rotaryDim),
                        theta ? builder.getF64FloatAttr(*theta) : nullptr,
                        mlir::DenseFPElementsAttr::get(freqType,
                                                       llvm::ArrayRef<float>(frequencies)),
                        nullptr)
      .getResult();
}

mlir::Value GgufBuilder::layer(int64_t index, mlir::Value x) {
  const std::string p = "blk." + std::to_string(index) + ".";
  const int64_t hidden = config.hidden, qRows = config.heads * config.headDim,
                kvRows = config.kvHeads * config.headDim;
  const std::string shapes = " (from " + key("embedding_length") + ", " +
                             key("attention.head_count") + ", " +
                             key("attention.head_count_kv") + ", the head dim)";
  const std::string width = " (" + key("embedding_length") + ")";
  // exaone4 has no norm before attention or the MLP: they take the residual.
  mlir::Value normed =
      config.preNorms ? rmsNorm(x, p + "attn_norm.weight", "the attention norm" + width) : x;
  // llama.cpp's qwen2 always has q/k/v biases; other architectures may.
  auto bias = [&](const char *name) -> std::string {
    std::string tensor = p + name + ".bias";
    return config.qkvBias || file.findTensor(tensor) ? tensor : "";
  };
  int64_t qHeads = config.permutedQK ? config.heads : 0;
  int64_t kHeads = config.permutedQK ? config.kvHeads : 0;
  // phi3: q | k | v are the row blocks of one attn_qkv.
  const int64_t qkvRows = qRows + 2 * kvRows;
  auto projection = [&](const char *name, int64_t begin, int64_t rows, const std::string &what,
                        int64_t permuteHeads) {
    if (config.fusedProjections)
      return linearRows(normed, p + "attn_qkv.weight", hidden, qkvRows, begin, rows,
                        "q | k | v" + shapes);
    return linear(normed, p + name + ".weight", hidden, rows, what + shapes, bias(name),
                  permuteHeads);
  };
  mlir::Value q = projection("attn_q", 0, qRows, "q_proj", qHeads);
  auto headNorm = [&](mlir::Value v, const std::string &name) {
    auto w = weight(name, {static_cast<uint64_t>(config.headDim)}, "a per-head norm of " +
                    key("attention.key_length") + " entries");
    return builder
        .create<HeadRMSNormOp>(loc, v.getType(), v, w, builder.getF32FloatAttr(config.rmsEps),
                               builder.getI64IntegerAttr(config.headDim))
        .getResult();
  };
  if (config.qkNorm)
    q = headNorm(q, p + "attn_q_norm.weight");
  mlir::Value k = projection("attn_k", qRows, kvRows, "k_proj", kHeads);
  if (config.qkNorm)
    k = headNorm(k, p + "attn_k_norm.weight");
  mlir::Value v = projection("attn_v", qRows + kvRows, kvRows, "v_proj", 0);
  // gemma3's full layers see every position and rotate by the global base.
  const bool sliding = !config.slidingLayers.empty() && config.slidingLayers[index];
  const bool windowed = config.slidingLayers.empty() || sliding;
  // smollm3's every fourth layer attends without rotary (NoPE).
  const bool rotates = config.noRopeEvery == 0 || (index + 1) % config.noRopeEvery != 0;
  mlir::Value qr = rotates ? rotary(q, qRows, sliding) : q;
  mlir::Value kr = rotates ? rotary(k, kvRows, sliding) : k;
  float scale = static_cast<float>(
      config.attentionScale.value_or(1.0 / std::sqrt(static_cast<double>(config.headDim))));
  mlir::Value attended =
      builder
          .create<AttentionOp>(loc, vector(qRows), qr, kr, v, function.getArgument(2 + index),
                               function.getArgument(1), builder.getI64IntegerAttr(config.heads),
                               builder.getI64IntegerAttr(config.kvHeads),
                               builder.getI64IntegerAttr(config.headDim),
                               builder.getF32FloatAttr(scale),
                               windowed && config.slidingWindow
                                   ? builder.getI64IntegerAttr(config.slidingWindow)
                                   : nullptr)
          .getResult();
  mlir::Value o = linear(attended, p + "attn_output.weight", qRows, hidden, "o_proj" + shapes, "",
                         0, config.residualScale);
  if (config.postNorms)
    o = rmsNorm(o, p + "post_attention_norm.weight", "the norm after attention" + width);
  mlir::Value h = builder.create<AddOp>(loc, x.getType(), x, o).getResult();

  const std::string ffn = " (from " + key("embedding_length") + " and " +
                          key("feed_forward_length") + ")";
  mlir::Value post =
      config.preNorms ? rmsNorm(h, p + "ffn_norm.weight", "the MLP norm" + width) : h;
  mlir::Value gate, up;
  if (config.fusedProjections) { // phi3: gate | up in one ffn_up
    gate = linearRows(post, p + "ffn_up.weight", hidden, 2 * config.ffn, 0, config.ffn,
                      "gate | up" + ffn);
    up = linearRows(post, p + "ffn_up.weight", hidden, 2 * config.ffn, config.ffn, config.ffn,
                    "gate | up" + ffn);
  } else {
    gate = linear(post, p + "ffn_gate.weight", hidden, config.ffn, "gate_proj" + ffn);
    up = linear(post, p + "ffn_up.weight", hidden, config.ffn, "up_proj" + ffn);
  }
  mlir::Value act =
      config.geluMlp
          ? builder.create<GeluTanhMulOp>(loc, gate.getType(), gate, up).getResult()
          : builder.create<SiluMulOp>(loc, gate.getType(), gate, up).getResult();
  mlir::Value down = linear(act, p + "ffn_down.weight", config.ffn, hidden, "down_proj" + ffn, "",
                            0, config.residualScale);
  if (config.postNorms)
    down = rmsNorm(down, p + "post_ffw_norm.weight", "the norm after the MLP" + width);
  return builder.create<AddOp>(loc, h.getType(), h, down).getResult();
}

mlir::OwningOpRef<mlir::ModuleOp> GgufBuilder::build() {
  mlir::MLIRContext *context = builder.getContext();
  module = mlir::ModuleOp::create(loc);
  std::vector<mlir::Type> arguments = {builder.getI64Type(), builder.getIndexType()};
  for (int64_t i = 0; i < config.layers; ++i)
    arguments.push_back(KVCacheType::get(context, config.kvHeads, config.headDim));
  builder.setInsertionPointToEnd(module->getBody());
  function = builder.create<mlir::func::FuncOp>(loc, "decode_step",
                                                builder.getFunctionType(arguments, {}));
  builder.setInsertionPointToEnd(function.addEntryBlock());

  const auto hidden = static_cast<uint64_t>(config.hidden), vocab = static_cast<uint64_t>(config.vocab);
  auto table = weight("token_embd.weight", {hidden, vocab}, "the embedding table", 0,
                      {0, 0, config.embeddingScale});
  mlir::Value x = builder.create<EmbeddingOp>(loc, vector(config.hidden), table,
                                              function.getArgument(0))
                      .getResult();
  for (int64_t i = 0; i < config.layers; ++i)
    x = layer(i, x);
  x = rmsNorm(x, "output_norm.weight", "the final norm (" + key("embedding_length") + ")");
  // A tied lm_head reads the table without the lookup's factor.
  auto head = config.tied ? (config.embeddingScale == 1.0 && config.logitScale == 1.0
                                 ? table
                                 : weight("token_embd.weight", {hidden, vocab},
                                          "the embedding table", 0, {0, 0, config.logitScale}))
                          : weight("output.weight", {hidden, vocab},
                                   "the lm_head (token_embd.weight's shape)", 0,
                                   {0, 0, config.logitScale});
  auto logits = builder.create<LogitsOp>(loc, vector(config.vocab), x, head).getResult();
  auto next = builder.create<ArgmaxOp>(loc, builder.getI64Type(), logits).getResult();
  builder.create<mlir::func::ReturnOp>(loc, mlir::ValueRange{logits, next});
  function.setType(builder.getFunctionType(arguments, {logits.getType(), builder.getI64Type()}));

  // A tensor nothing read would be a part of the model mk does not compute
  // (a different block structure, an extra bias): refused, not dropped.
  used.insert("rope_freqs.weight"); // read with the hyperparameters
  for (const GgufTensor &tensor : file.tensors())
    if (!used.count(std::string(tensor.name)))
      throw GgufImportError("tensor '" + std::string(tensor.name) + "' (info at offset " +
                            std::to_string(tensor.infoOffset) + ") is not part of a '" +
                            config.architecture + "' decoder of " + std::to_string(config.layers) +
                            " blocks as mkc builds it; refusing rather than ignoring it");
  // Values after structure: a file that is not a decoder says so first.
  if (!nonFinite.empty())
    throw GgufImportError(nonFinite);
  if (mlir::failed(mlir::verify(*module)))
    throw GgufImportError("the mk IR built from the file does not verify (see the diagnostics "
                          "above)");
  return std::move(module);
}

} // namespace

llvm::Expected<ImportedModel> importGgufModel(mlir::MLIRContext &context,
                                              const std::string &path) {
  context.getOrLoadDialect<MkDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  auto fail = [&](const std::string &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "'" + path + "': " + message);
  };
  std::string error;
  std::shared_ptr<const GgufFile> file = GgufFile::open(path, error);
  if (!file) // the reader's message names the path already
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  GgufDecoderConfig config;
  if (std::string problem = readDecoderConfig(*file, config); !problem.empty())
    return fail(problem);
  ImportedModel imported;
  GgufSpecialTokens special;
  if (std::string problem = readSpecialTokens(*file, special); !problem.empty())
    return fail(problem);
  imported.tokens.present = true;
  imported.tokens.source = path;
  imported.tokens.eosTokens = special.eosTokens;
  imported.tokens.bosToken = special.bosToken;
  imported.tokens.chatTemplate = std::move(special.chatTemplate);
  GgufTokenizerJson tokenizer;
  if (std::string problem = buildGgufTokenizerJson(*file, tokenizer); !problem.empty())
    return fail(problem);
  imported.tokens.tokenizerJson = std::move(tokenizer.json);
  imported.tokens.tokenizerTokens = tokenizer.tokens;
  imported.tokens.noTokenizerReason = std::move(tokenizer.unsupported);
  try {
    GgufBuilder builder(context, file, config, imported.weights);
    imported.module = builder.build();
  } catch (const GgufImportError &problem) {
    return fail(problem.what());
  }
  return imported;
}

} // namespace mk
