#include "compiler/interpreter/ReferenceInterpreter.h"

#include "compiler/dialect/MkDialect.h"
#include "core/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

namespace mk {

namespace {

// The weights an op names, found once by create() so that step() looks up
// nothing by name.
struct OpWeights {
  const Weight *weight = nullptr;
  const Weight *bias = nullptr;
};

// The SSA values of one decode step.
struct Frame {
  llvm::DenseMap<mlir::Value, std::vector<float>> vectors;
  llvm::DenseMap<mlir::Value, int64_t> scalars;

  std::span<const float> vector(mlir::Value value) const {
    auto it = vectors.find(value);
    assert(it != vectors.end() && "every vector is defined before its use");
    return it->second;
  }
  int64_t scalar(mlir::Value value) const {
    auto it = scalars.find(value);
    assert(it != scalars.end() && "every scalar is defined before its use");
    return it->second;
  }
};

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string describe(mlir::Operation *op) {
  std::string text = "'" + op->getName().getStringRef().str() + "' at ";
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

llvm::Error opError(mlir::Operation *op, const llvm::Twine &message) {
  return error(describe(op) + ": " + message);
}

std::string printed(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

std::string printed(llvm::ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  return text + "]";
}

int64_t lengthOf(mlir::Value vector) {
  return vector.getType().cast<mlir::RankedTensorType>().getDimSize(0);
}

std::vector<float> vectorFor(mlir::Value result) {
  return std::vector<float>(lengthOf(result));
}

llvm::Error checkPosition(mlir::Operation *op, const kernels::KVCache &cache, int64_t pos) {
  if (pos < 0 || pos >= cache.capacity())
    return opError(op, "position " + llvm::Twine(pos) + " is outside the cache's " +
                           llvm::Twine(cache.capacity()) + " positions");
  return llvm::Error::success();
}

} // namespace

struct ReferenceInterpreter::State {
  State(mlir::ModuleOp module, const WeightTable &weights, int64_t maxContext)
      : module(module), weights(weights), maxContext(maxContext) {}

  // Everything create() promises to check; afterwards step() can only fail on
  // the token, the position, or a bug.
  llvm::Error prepare();
  llvm::Error verifyModule();
  llvm::Error checkSignature();
  llvm::Error prepareOp(mlir::Operation *op);
  llvm::Expected<const Weight *> resolveWeight(mlir::Operation *user,
                                               mlir::FlatSymbolRefAttr name);
  llvm::Error resolveWeights(mlir::Operation *user, mlir::FlatSymbolRefAttr weight,
                             mlir::FlatSymbolRefAttr bias = nullptr);
  llvm::Error resolveCache(mlir::Operation *user, mlir::Value cache);
  llvm::Error prepareGemv(GemvOp op);
  llvm::Error prepareFusedAttention(FusedAttentionOp op);

  llvm::Expected<std::vector<float>> run(int64_t token, int64_t pos);
  llvm::Error runOp(mlir::Operation *op, Frame &frame);
  llvm::Error runEmbedding(EmbeddingOp op, Frame &frame);
  llvm::Error runRmsNorm(RMSNormOp op, Frame &frame);
  llvm::Error runHeadRmsNorm(HeadRMSNormOp op, Frame &frame);
  llvm::Error runLinear(LinearOp op, Frame &frame);
  llvm::Error runRotary(RotaryOp op, Frame &frame);
  llvm::Error runAttention(AttentionOp op, Frame &frame);
  llvm::Error runSiluMul(SiluMulOp op, Frame &frame);
  llvm::Error runGeluTanhMul(GeluTanhMulOp op, Frame &frame);
  llvm::Error runAdd(AddOp op, Frame &frame);
  llvm::Error runLogits(LogitsOp op, Frame &frame);
  llvm::Error runArgmax(ArgmaxOp op, Frame &frame);
  llvm::Error runGemv(GemvOp op, Frame &frame);
  llvm::Error runSlice(SliceOp op, Frame &frame);
  llvm::Error runFusedAttention(FusedAttentionOp op, Frame &frame);

  static constexpr unsigned kTokenArg = 0, kPositionArg = 1, kFirstCacheArg = 2;

  mlir::ModuleOp module;
  const WeightTable &weights;
  int64_t maxContext;
  mlir::func::FuncOp decodeStep;
  std::vector<kernels::KVCache> caches; // one per !mk.kv_cache argument, in order
  llvm::DenseMap<mlir::Operation *, OpWeights> weightsOf;
  llvm::DenseMap<mlir::Operation *, std::vector<float>> invFreqOf;
  llvm::DenseMap<mlir::Operation *, kernels::KVCache *> cacheOf;
  llvm::DenseMap<mlir::Operation *, kernels::GemvConfig> gemvOf;
  // q_norm and k_norm of each mk.fused_attention; its frequencies are in invFreqOf.
  llvm::DenseMap<mlir::Operation *, std::pair<const Weight *, const Weight *>> headNormsOf;
};

llvm::Error ReferenceInterpreter::State::prepare() {
  if (maxContext <= 0)
    return error("maxContext must be positive, got " + llvm::Twine(maxContext));
  if (llvm::Error err = verifyModule())
    return err;
  decodeStep = module.lookupSymbol<mlir::func::FuncOp>("decode_step");
  if (!decodeStep)
    return error("the module has no func.func @decode_step");
  if (llvm::Error err = checkSignature())
    return err;
  if (decodeStep.isExternal())
    return error("func.func @decode_step has no body");
  if (!llvm::hasSingleElement(decodeStep.getBody()))
    return error("func.func @decode_step must have a single block");
  mlir::Block &body = decodeStep.getBody().front();
  for (mlir::Operation &op : body)
    if (llvm::Error err = prepareOp(&op))
      return err;
  if (body.empty() || !llvm::isa<mlir::func::ReturnOp>(body.back()))
    return error("func.func @decode_step does not end in func.return");
  return llvm::Error::success();
}

// The kernels trust the shapes the verifiers check, so an unverified module is
// refused rather than run.
llvm::Error ReferenceInterpreter::State::verifyModule() {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(module.getContext(), [&](mlir::Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << "\n  " << diag.getLocation() << ": " << diag;
    for (mlir::Diagnostic &note : diag.getNotes())
      os << "\n    note: " << note;
    return mlir::success();
  });
  if (mlir::failed(mlir::verify(module)))
    return error("the module does not verify:" + diagnostics);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::checkSignature() {
  mlir::FunctionType type = decodeStep.getFunctionType();
  auto signatureError = [&](const llvm::Twine &problem) {
    return error("func.func @decode_step has type " + printed(type) + ", expected (i64, index, " +
                 "!mk.kv_cache...) -> (tensor<Vxf32>, i64): " + problem);
  };
  if (type.getNumInputs() < kFirstCacheArg)
    return signatureError("it lacks the token and position arguments");
  if (!type.getInput(kTokenArg).isSignlessInteger(64))
    return signatureError("argument 0, the token, is not i64");
  if (!type.getInput(kPositionArg).isIndex())
    return signatureError("argument 1, the position, is not index");
  for (unsigned i = kFirstCacheArg; i < type.getNumInputs(); ++i) {
    auto cacheType = type.getInput(i).dyn_cast<KVCacheType>();
    if (!cacheType)
      return signatureError("argument " + llvm::Twine(i) + " is not a !mk.kv_cache");
    caches.emplace_back(maxContext, cacheType.getNumKvHeads(), cacheType.getHeadDim());
  }
  if (type.getNumResults() != 2)
    return signatureError("it must return exactly the logits and the next token");
  auto logitsType = type.getResult(0).dyn_cast<mlir::RankedTensorType>();
  if (!logitsType || logitsType.getRank() != 1 || !logitsType.hasStaticShape() ||
      !logitsType.getElementType().isF32())
    return signatureError("result 0, the logits, is not a static tensor<Vxf32>");
  if (!type.getResult(1).isSignlessInteger(64))
    return signatureError("result 1, the next token, is not i64");
  return llvm::Error::success();
}

llvm::Expected<const Weight *>
ReferenceInterpreter::State::resolveWeight(mlir::Operation *user, mlir::FlatSymbolRefAttr name) {
  // The verifier has matched the op's shapes against the mk.weight
  // declaration; matching the table against the declaration completes the
  // chain from op to values.
  auto declaration = module.lookupSymbol<WeightOp>(name.getAttr());
  if (!declaration)
    return opError(user, "@" + name.getValue() + " is not a mk.weight");
  const Weight *weight = weights.find(name.getValue().str());
  if (!weight)
    return opError(user, "weight '" + name.getValue() + "' is not in the weight table");
  auto declared = declaration.getType().cast<mlir::RankedTensorType>();
  if (llvm::ArrayRef<int64_t>(weight->shape) != declared.getShape() ||
      static_cast<int64_t>(weight->values.size()) != declared.getNumElements())
    return opError(user, "weight '" + name.getValue() + "' in the weight table has shape " +
                             printed(weight->shape) + " and " +
                             llvm::Twine(weight->values.size()) + " values, but it is declared " +
                             printed(declared));
  return weight;
}

llvm::Error ReferenceInterpreter::State::resolveWeights(mlir::Operation *user,
                                                        mlir::FlatSymbolRefAttr weight,
                                                        mlir::FlatSymbolRefAttr bias) {
  OpWeights resolved;
  auto main = resolveWeight(user, weight);
  if (!main)
    return main.takeError();
  resolved.weight = *main;
  if (bias) {
    auto resolvedBias = resolveWeight(user, bias);
    if (!resolvedBias)
      return resolvedBias.takeError();
    resolved.bias = *resolvedBias;
  }
  weightsOf[user] = resolved;
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::resolveCache(mlir::Operation *user, mlir::Value cache) {
  // Caches are only ever function arguments: no op creates one.
  auto argument = cache.dyn_cast<mlir::BlockArgument>();
  if (!argument || argument.getOwner() != &decodeStep.getBody().front())
    return opError(user, "the cache is not an argument of @decode_step");
  cacheOf[user] = &caches[argument.getArgNumber() - kFirstCacheArg];
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::prepareGemv(GemvOp op) {
  kernels::GemvConfig config;
  auto add = [&](mlir::FlatSymbolRefAttr name,
                 std::vector<std::span<const float>> &to) -> llvm::Error {
    auto weight = resolveWeight(op, name);
    if (!weight)
      return weight.takeError();
    to.push_back((*weight)->values);
    return llvm::Error::success();
  };
  for (auto name : op.getWeights().getAsRange<mlir::FlatSymbolRefAttr>())
    if (llvm::Error err = add(name, config.weights))
      return err;
  if (auto biases = op.getBiases())
    for (auto name : biases->getAsRange<mlir::FlatSymbolRefAttr>())
      if (llvm::Error err = add(name, config.biases))
        return err;
  if (auto norm = op.getNormAttr()) {
    auto weight = resolveWeight(op, norm);
    if (!weight)
      return weight.takeError();
    config.norm = (*weight)->values;
    config.eps = op.getEpsAttr().getValueAsDouble();
  }
  config.epilogue = llvm::StringSwitch<kernels::Epilogue>(op.getEpilogue())
                        .Case("silu_mul", kernels::Epilogue::SiluMul)
                        .Case("gelu_tanh_mul", kernels::Epilogue::GeluTanhMul)
                        .Case("residual", kernels::Epilogue::Residual)
                        .Default(kernels::Epilogue::None);
  gemvOf[op] = std::move(config);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::prepareFusedAttention(FusedAttentionOp op) {
  if (llvm::Error err = resolveCache(op, op.getCache()))
    return err;
  std::pair<const Weight *, const Weight *> norms;
  for (auto [name, to] :
       {std::pair{op.getQNormAttr(), &norms.first}, {op.getKNormAttr(), &norms.second}}) {
    if (!name)
      continue;
    auto weight = resolveWeight(op, name);
    if (!weight)
      return weight.takeError();
    *to = *weight;
  }
  headNormsOf[op] = norms;
  if (auto invFreq = op.getInvFreqAttr()) {
    auto values = invFreq.getValues<float>();
    invFreqOf[op] = std::vector<float>(values.begin(), values.end());
  }
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::prepareOp(mlir::Operation *op) {
  return llvm::TypeSwitch<mlir::Operation *, llvm::Error>(op)
      .Case([&](EmbeddingOp embedding) {
        return resolveWeights(op, embedding.getTableAttr());
      })
      .Case([&](RMSNormOp norm) { return resolveWeights(op, norm.getWeightAttr()); })
      .Case([&](HeadRMSNormOp norm) { return resolveWeights(op, norm.getWeightAttr()); })
      .Case([&](LinearOp linear) {
        return resolveWeights(op, linear.getWeightAttr(), linear.getBiasAttr());
      })
      .Case([&](LogitsOp logits) { return resolveWeights(op, logits.getWeightAttr()); })
      .Case([&](RotaryOp rotary) {
        auto values = rotary.getInvFreq().getValues<float>();
        invFreqOf[op] = std::vector<float>(values.begin(), values.end());
        return llvm::Error::success();
      })
      .Case([&](AttentionOp attention) { return resolveCache(op, attention.getCache()); })
      .Case([&](GemvOp gemv) { return prepareGemv(gemv); })
      .Case([&](FusedAttentionOp attention) { return prepareFusedAttention(attention); })
      .Case<SiluMulOp, GeluTanhMulOp, AddOp, ArgmaxOp, SliceOp, mlir::func::ReturnOp>(
          [](mlir::Operation *) { return llvm::Error::success(); })
      .Default([&](mlir::Operation *) {
        return opError(op, "the reference interpreter does not know this op");
      });
}

llvm::Error ReferenceInterpreter::State::runEmbedding(EmbeddingOp op, Frame &frame) {
  const Weight &table = *weightsOf.lookup(op).weight;
  int64_t width = lengthOf(op.getResult());
  int64_t vocab = table.shape[0];
  int64_t token = frame.scalar(op.getToken());
  if (token < 0 || token >= vocab)
    return opError(op, "token " + llvm::Twine(token) + " is outside the " + llvm::Twine(vocab) +
                           " rows of table '" + table.name + "'");
  auto row = table.values.begin() + token * width;
  frame.vectors[op.getResult()] = std::vector<float>(row, row + width);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runRmsNorm(RMSNormOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::rmsNorm(frame.vector(op.getInput()), weightsOf.lookup(op).weight->values,
                   op.getEps().convertToFloat(), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runHeadRmsNorm(HeadRMSNormOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::headRmsNorm(frame.vector(op.getInput()), weightsOf.lookup(op).weight->values,
                       op.getEps().convertToFloat(), op.getHeadDim(), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runLinear(LinearOp op, Frame &frame) {
  OpWeights resolved = weightsOf.lookup(op);
  std::span<const float> bias;
  if (resolved.bias)
    bias = resolved.bias->values;
  std::vector<float> y = vectorFor(op.getResult());
  kernels::linear(frame.vector(op.getInput()), resolved.weight->values, bias, y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runRotary(RotaryOp op, Frame &frame) {
  kernels::RotaryConfig config{static_cast<int64_t>(op.getHeadDim()),
                               static_cast<int64_t>(op.getRotaryDim()), invFreqOf.find(op)->second,
                               op.getInterleaved()};
  std::vector<float> y = vectorFor(op.getResult());
  kernels::rotary(frame.vector(op.getInput()), config, frame.scalar(op.getPos()), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runAttention(AttentionOp op, Frame &frame) {
  kernels::KVCache &cache = *cacheOf.lookup(op);
  int64_t pos = frame.scalar(op.getPos());
  if (llvm::Error err = checkPosition(op, cache, pos))
    return err;
  std::vector<float> y = vectorFor(op.getResult());
  kernels::attention(frame.vector(op.getQ()), frame.vector(op.getK()), frame.vector(op.getV()),
                     cache, pos, op.getNumHeads(), op.getScale().convertToFloat(), y,
                     op.getWindow().value_or(0));
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runSiluMul(SiluMulOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::siluMul(frame.vector(op.getGate()), frame.vector(op.getUp()), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runGeluTanhMul(GeluTanhMulOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::geluTanhMul(frame.vector(op.getGate()), frame.vector(op.getUp()), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runAdd(AddOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::add(frame.vector(op.getLhs()), frame.vector(op.getRhs()), y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runLogits(LogitsOp op, Frame &frame) {
  std::vector<float> y = vectorFor(op.getResult());
  kernels::linear(frame.vector(op.getInput()), weightsOf.lookup(op).weight->values, {}, y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runArgmax(ArgmaxOp op, Frame &frame) {
  frame.scalars[op.getResult()] = kernels::argmax(frame.vector(op.getInput()));
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runGemv(GemvOp op, Frame &frame) {
  std::span<const float> residual;
  if (op.getResidual())
    residual = frame.vector(op.getResidual());
  std::vector<float> y = vectorFor(op.getResult());
  kernels::gemv(frame.vector(op.getInput()), gemvOf.find(op)->second, residual, y);
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runSlice(SliceOp op, Frame &frame) {
  auto entries = frame.vector(op.getInput()).subspan(op.getOffset(), lengthOf(op.getResult()));
  frame.vectors[op.getResult()] = std::vector<float>(entries.begin(), entries.end());
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runFusedAttention(FusedAttentionOp op, Frame &frame) {
  kernels::KVCache &cache = *cacheOf.lookup(op);
  int64_t pos = frame.scalar(op.getPos());
  if (llvm::Error err = checkPosition(op, cache, pos))
    return err;
  kernels::AttentionInputConfig config{};
  config.numHeads = static_cast<int64_t>(op.getNumHeads());
  auto [qNorm, kNorm] = headNormsOf.lookup(op);
  if (qNorm)
    config.qNorm = qNorm->values;
  if (kNorm)
    config.kNorm = kNorm->values;
  if (auto eps = op.getNormEpsAttr())
    config.normEps = eps.getValueAsDouble();
  config.rotary.headDim = static_cast<int64_t>(op.getHeadDim());
  config.rotary.rotaryDim = static_cast<int64_t>(op.getRotaryDim());
  config.rotary.interleaved = op.getInterleaved();
  if (auto it = invFreqOf.find(op); it != invFreqOf.end())
    config.rotary.invFreq = it->second;
  std::vector<float> y = vectorFor(op.getResult());
  kernels::fusedAttention(frame.vector(op.getQkv()), config, cache, pos,
                          op.getScale().convertToFloat(), y, op.getWindow().value_or(0));
  frame.vectors[op.getResult()] = std::move(y);
  return llvm::Error::success();
}

llvm::Error ReferenceInterpreter::State::runOp(mlir::Operation *op, Frame &frame) {
  return llvm::TypeSwitch<mlir::Operation *, llvm::Error>(op)
      .Case([&](EmbeddingOp embedding) { return runEmbedding(embedding, frame); })
      .Case([&](RMSNormOp norm) { return runRmsNorm(norm, frame); })
      .Case([&](HeadRMSNormOp norm) { return runHeadRmsNorm(norm, frame); })
      .Case([&](LinearOp linear) { return runLinear(linear, frame); })
      .Case([&](RotaryOp rotary) { return runRotary(rotary, frame); })
      .Case([&](AttentionOp attention) { return runAttention(attention, frame); })
      .Case([&](SiluMulOp siluMul) { return runSiluMul(siluMul, frame); })
      .Case([&](GeluTanhMulOp geluMul) { return runGeluTanhMul(geluMul, frame); })
      .Case([&](AddOp add) { return runAdd(add, frame); })
      .Case([&](LogitsOp logits) { return runLogits(logits, frame); })
      .Case([&](ArgmaxOp argmax) { return runArgmax(argmax, frame); })
      .Case([&](GemvOp gemv) { return runGemv(gemv, frame); })
      .Case([&](SliceOp slice) { return runSlice(slice, frame); })
      .Case([&](FusedAttentionOp attention) { return runFusedAttention(attention, frame); })
      .Case([](mlir::func::ReturnOp) { return llvm::Error::success(); })
      .Default([&](mlir::Operation *) {
        return opError(op, "the reference interpreter does not know this op");
      });
}

// A failed step may leave k and v written at `pos`; that is harmless, since
// the next step at the same position overwrites them before reading.
llvm::Expected<std::vector<float>> ReferenceInterpreter::State::run(int64_t token, int64_t pos) {
  Frame frame;
  mlir::Block &body = decodeStep.getBody().front();
  frame.scalars[body.getArgument(kTokenArg)] = token;
  frame.scalars[body.getArgument(kPositionArg)] = pos;
  for (mlir::Operation &op : body)
    if (llvm::Error err = runOp(&op, frame))
      return err;
  auto ret = llvm::cast<mlir::func::ReturnOp>(body.getTerminator());
  return std::move(frame.vectors[ret.getOperand(0)]);
}

ReferenceInterpreter::ReferenceInterpreter(mlir::ModuleOp module, const WeightTable &weights,
                                           int64_t maxContext)
    : state(std::make_unique<State>(module, weights, maxContext)) {}

ReferenceInterpreter::~ReferenceInterpreter() = default;

llvm::Expected<std::unique_ptr<ReferenceInterpreter>>
ReferenceInterpreter::create(mlir::ModuleOp module, const WeightTable &weights,
                             int64_t maxContext) {
  std::unique_ptr<ReferenceInterpreter> interpreter(
      new ReferenceInterpreter(module, weights, maxContext));
  if (llvm::Error err = interpreter->state->prepare())
    return err;
  return interpreter;
}

llvm::Expected<std::vector<float>> ReferenceInterpreter::step(int64_t token) {
  if (nextPosition >= state->maxContext)
    return error("the context is full: all " + llvm::Twine(state->maxContext) +
                 " positions of maxContext are used");
  auto logits = state->run(token, nextPosition);
  if (logits)
    ++nextPosition;
  return logits;
}

} // namespace mk
