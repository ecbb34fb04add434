// The importer's driver: declares the decoder signature's inputs as symbolic
// values, runs every node through the constant folder or a rule, then checks
// that the outputs mean what the signature promises (logits, and each
// present.N.* being the past cache with this step's entry appended).
#include "frontends/onnx/DecoderImporter.h"

#include "core/weights/TransposedValues.h"
#include "frontends/onnx/ConstantFolder.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"
#include "frontends/onnx/OpAttributes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/SideEffectUtils.h"

#include <algorithm>
#include <cstring>
#include <regex>
#include <stdexcept>

namespace mk::onnx_import {

namespace {

// The past length the abstract run uses. Long enough that the mask of a
// sliding window up to 2^18 positions (Mistral's 4096, Phi-3.5's 262144)
// hides something, so that the window is seen rather than the model read as
// full attention; above 1 so the time axis is never a unit axis. The masks
// the run folds are this long, a megabyte each.
constexpr int64_t kAbstractPastLength = (int64_t{1} << 18) + 1;

struct CacheInput {
  int64_t layer;
  bool isKey;
};

std::optional<CacheInput> parseCacheName(const std::string &name, const std::string &prefix) {
  static const std::regex pattern(R"(^([a-z_]+)\.(\d+)\.(key|value)$)");
  std::smatch match;
  if (!std::regex_match(name, match, pattern) || match[1].str() != prefix)
    return std::nullopt;
  return CacheInput{std::stoll(match[2].str()), match[3].str() == "key"};
}

// A hash of the shape and the value bits, a 64-bit word at a time (a
// match is confirmed by comparing the values, so speed matters more than
// strength: gigabytes of weights pass through here).
// A hash of a weight's shape and first values, to find tied copies among
// weights of equal contents: cheap for a lazy weight (a few pages of its
// file), and sameValues decides.
uint64_t fingerprintOf(const Weight &weight) {
  uint64_t hash = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t word) {
    hash = (hash ^ word) * 0xff51afd7ed558ccdull;
    hash ^= hash >> 32;
  };
  for (int64_t dim : weight.shape)
    mix(static_cast<uint64_t>(dim));
  constexpr uint64_t kSampled = 1 << 16;
  std::vector<float> values(std::min<uint64_t>(static_cast<uint64_t>(weight.numElements()),
                                               kSampled));
  weight.readValues(0, values.size(), values.data());
  for (float value : values) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    mix(bits);
  }
  return hash;
}

// Whether two weights of one shape hold equal values (as floats compare),
// read a piece at a time.
bool sameValues(const Weight &a, const Weight &b) {
  constexpr uint64_t kPiece = 1 << 20;
  uint64_t count = static_cast<uint64_t>(a.numElements());
  std::vector<float> left, right;
  for (uint64_t begin = 0; begin < count; begin += kPiece) {
    uint64_t n = std::min(kPiece, count - begin);
    left.resize(n);
    right.resize(n);
    a.readValues(begin, n, left.data());
    b.readValues(begin, n, right.data());
    if (left != right)
      return false;
  }
  return true;
}

// out = in^T for a row-major [rows, cols] matrix, in tiles so that both
// sides stay in cache.
void transposeInto(const std::vector<float> &in, int64_t rows, int64_t cols,
                   std::vector<float> &out) {
  constexpr int64_t kTile = 32;
  out.resize(in.size());
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile)
      for (int64_t r = r0; r < std::min(r0 + kTile, rows); ++r)
        for (int64_t c = c0; c < std::min(c0 + kTile, cols); ++c)
          out[c * rows + r] = in[r * cols + c];
}

bool isIntegerType(int onnxType) {
  using TP = onnx::TensorProto;
  return onnxType == TP::INT64 || onnxType == TP::INT32;
}

} // namespace

GraphImporter::GraphImporter(mlir::MLIRContext &context, LoadedModel &model,
                             WeightTable &weights, int64_t pastLength)
    : builder(&context), loc(builder.getUnknownLoc()), model(model), weights(weights),
      pastLength(pastLength) {
  addLayoutRules(rules);
  addArithmeticRules(rules);
  addAttentionRules(rules);
  addGeluRules(rules);
}

mlir::Value GraphImporter::cacheArgument(int64_t layer) {
  for (size_t i = 0; i < cacheLayers.size(); ++i)
    if (cacheLayers[i] == layer)
      return function.getArgument(2 + i);
  fail("no past_key_values." + std::to_string(layer) + " inputs for an attention layer");
}

Symbolic GraphImporter::constant(Tensor tensor) const {
  auto value = std::make_shared<SymbolicValue>();
  value->kind = SymbolicKind::Constant;
  value->shape = tensor.shape;
  value->constant = std::make_shared<const Tensor>(std::move(tensor));
  return value;
}

Symbolic GraphImporter::activation(mlir::Value v, std::vector<int64_t> shape) const {
  auto value = std::make_shared<SymbolicValue>();
  value->kind = SymbolicKind::Activation;
  value->value = v;
  value->shape = std::move(shape);
  return value;
}

Symbolic GraphImporter::with(const SymbolicValue &base, std::vector<int64_t> shape) {
  auto value = std::make_shared<SymbolicValue>(base);
  value->shape = std::move(shape);
  return value;
}

mlir::RankedTensorType GraphImporter::vectorType(int64_t length) {
  return mlir::RankedTensorType::get({length}, builder.getF32Type());
}

mlir::FlatSymbolRefAttr GraphImporter::weightFor(const Tensor &tensor, bool transpose,
                                                 const std::string &hint) {
  if (tensor.kind != ElementKind::Float)
    fail("weight '" + hint + "' is not a floating-point tensor");
  // A lazy weight's values are checked as they are written to the .mk
  // (streamWeights refuses a NaN or infinity there).
  if (std::string problem = tensor.isLazy() ? "" : describeNonFinite(
          tensor.floats, tensor.origin.empty() ? "weight '" + hint + "'"
                                               : "initializer '" + tensor.origin + "'");
      !problem.empty())
    fail(problem);
  bool transposedFromSource = tensor.originTransposed != transpose;
  std::string key = tensor.origin.empty() ? "" : tensor.origin + (transposedFromSource ? ".T" : "");
  if (!key.empty()) {
    auto it = weightsByOrigin.find(key);
    if (it != weightsByOrigin.end())
      return it->second;
  }
  Weight weight;
  weight.name = key.empty() ? hint : key;
  weight.storage = tensor.storage;
  if (transpose) {
    if (tensor.shape.size() != 2)
      fail("weight '" + weight.name + "' is not 2-D");
    int64_t rows = tensor.shape[0], cols = tensor.shape[1];
    weight.shape = {cols, rows};
    if (tensor.isLazy())
      weight.source = transposedValues(tensor.lazy, static_cast<uint64_t>(rows),
                                       static_cast<uint64_t>(cols));
    else
      transposeInto(tensor.floats, rows, cols, weight.values);
  } else {
    weight.shape = tensor.shape;
    if (tensor.isLazy())
      weight.source = tensor.lazy;
    else
      weight.values = tensor.floats;
  }
  mlir::Type element = builder.getF32Type();
  if (weight.storage == StorageType::F16)
    element = builder.getF16Type();
  else if (weight.storage == StorageType::BF16)
    element = builder.getBF16Type();
  auto type = mlir::RankedTensorType::get(weight.shape, element);
  // Exporters may store a tied weight twice (the lm_head as a transposed copy
  // of the embedding table): equal contents share one weight.
  uint64_t fingerprint = 0;
  try {
    fingerprint = fingerprintOf(weight);
  } catch (const std::runtime_error &failure) {
    fail(failure.what());
  }
  // The sample's pages go until the .mk is written.
  if (weight.source)
    weight.source->release();
  for (const auto &[candidate, symbol] : weightsByContent[fingerprint]) {
    const Weight *existing = weights.find(candidate);
    bool same = false;
    try {
      same = existing && existing->shape == weight.shape && existing->storage == weight.storage &&
             sameValues(*existing, weight);
    } catch (const std::runtime_error &failure) {
      fail(failure.what());
    }
    for (const Weight *compared : {existing, static_cast<const Weight *>(&weight)})
      if (compared && compared->source)
        compared->source->release();
    if (same) {
      if (!key.empty())
        weightsByOrigin[key] = symbol;
      return symbol;
    }
  }
  std::string name = weights.add(std::move(weight));

  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(function);
  auto op = builder.create<WeightOp>(loc, builder.getStringAttr(name), mlir::TypeAttr::get(type),
                                     tensor.origin.empty() ? nullptr
                                                           : builder.getStringAttr(tensor.origin));
  (void)op;
  auto symbol = mlir::FlatSymbolRefAttr::get(builder.getContext(), name);
  if (!key.empty())
    weightsByOrigin[key] = symbol;
  weightsByContent[fingerprint].push_back({name, symbol});
  return symbol;
}

void GraphImporter::declareInputs() {
  const onnx::GraphProto &graph = model.proto.graph();
  std::set<std::string> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  struct PastInput {
    std::string name;
    CacheInput cache;
    std::vector<int64_t> shape;
  };
  std::vector<PastInput> pasts;
  bool haveTokens = false, havePositions = false, haveMask = false;
  for (const auto &input : graph.input()) {
    const std::string &name = input.name();
    if (initializerNames.count(name))
      continue;
    const auto &tensorType = input.type().tensor_type();
    int elementType = tensorType.elem_type();
    auto value = std::make_shared<SymbolicValue>();
    if (name == "input_ids") {
      if (!isIntegerType(elementType))
        fail("graph input 'input_ids' must be int64 or int32");
      value->kind = SymbolicKind::Token;
      value->shape = {1, 1};
      haveTokens = true;
    } else if (name == "position_ids") {
      if (!isIntegerType(elementType))
        fail("graph input 'position_ids' must be int64 or int32");
      value->kind = SymbolicKind::Position;
      value->shape = {1, 1};
      havePositions = true;
    } else if (name == "attention_mask") {
      // A decode step sees every earlier token: the mask is all ones.
      ElementKind kind = isIntegerType(elementType) ? ElementKind::Int
                         : elementType == onnx::TensorProto::BOOL ? ElementKind::Bool
                                                                  : ElementKind::Float;
      values[name] = constant(Tensor::filled(kind, {1, pastLength + 1}, 1.0));
      haveMask = true;
      continue;
    } else if (auto cache = parseCacheName(name, "past_key_values")) {
      const auto &dims = tensorType.shape().dim();
      if (dims.size() != 4)
        fail("graph input '" + name + "' must be 4-D [batch, kv_heads, past, head_dim]");
      std::vector<int64_t> shape = {1, -1, pastLength, -1};
      for (int i : {1, 3}) {
        if (!dims[i].has_dim_value() || dims[i].dim_value() <= 0)
          fail("graph input '" + name + "': dimension " + std::to_string(i) +
               " (kv heads / head dim) must be a fixed number");
        shape[i] = dims[i].dim_value();
      }
      pasts.push_back({name, *cache, shape});
      continue;
    } else {
      fail("graph input '" + name + "' is not part of the decoder signature (input_ids, "
           "attention_mask, position_ids, past_key_values.N.key/value)");
    }
    values[name] = value;
  }
  if (!haveTokens)
    fail("the graph has no 'input_ids' input");
  if (!havePositions && !haveMask)
    fail("the graph has neither 'position_ids' nor 'attention_mask': the position of a token "
         "cannot be known");
  if (!havePositions) {
    // Positions then come from the mask's length (onnxruntime-genai's graphs):
    // the mask stays symbolic so that they are not folded to one number.
    auto mask = std::make_shared<SymbolicValue>();
    mask->kind = SymbolicKind::AttentionMask;
    mask->shape = {1, pastLength + 1};
    values["attention_mask"] = mask;
  }
  if (pasts.empty())
    fail("the graph has no past_key_values.N.key/value inputs; export it with a KV cache");

  std::sort(pasts.begin(), pasts.end(), [](const PastInput &a, const PastInput &b) {
    return std::make_pair(a.cache.layer, !a.cache.isKey) <
           std::make_pair(b.cache.layer, !b.cache.isKey);
  });
  std::map<int64_t, std::vector<int64_t>> keyShapes;
  for (const PastInput &past : pasts) {
    if (!past.cache.isKey) {
      auto it = keyShapes.find(past.cache.layer);
      if (it == keyShapes.end())
        fail("graph input '" + past.name + "' has no matching key input");
      if (it->second != past.shape)
        fail("graph input '" + past.name + "' does not have the shape of its key");
    } else {
      keyShapes[past.cache.layer] = past.shape;
      cacheLayers.push_back(past.cache.layer);
    }
    auto value = std::make_shared<SymbolicValue>();
    value->kind = SymbolicKind::PastCache;
    value->shape = past.shape;
    value->layer = past.cache.layer;
    value->isKey = past.cache.isKey;
    value->axes = "1KTD";
    value->axisSize = past.shape[1];
    values[past.name] = value;
  }

  mlir::MLIRContext *context = builder.getContext();
  module = mlir::ModuleOp::create(loc);
  std::vector<mlir::Type> arguments = {builder.getI64Type(), builder.getIndexType()};
  for (int64_t layer : cacheLayers) {
    const auto &shape = keyShapes[layer];
    arguments.push_back(KVCacheType::get(context, shape[1], shape[3]));
  }
  builder.setInsertionPointToEnd(module->getBody());
  function = builder.create<mlir::func::FuncOp>(loc, "decode_step",
                                                builder.getFunctionType(arguments, {}));
  builder.setInsertionPointToEnd(function.addEntryBlock());

  auto tokens = std::make_shared<SymbolicValue>(*values["input_ids"]);
  tokens->value = function.getArgument(0);
  values["input_ids"] = tokens;
  if (havePositions) {
    auto positions = std::make_shared<SymbolicValue>(*values["position_ids"]);
    positions->value = function.getArgument(1);
    values["position_ids"] = positions;
  } else {
    auto mask = std::make_shared<SymbolicValue>(*values["attention_mask"]);
    mask->value = function.getArgument(1);
    values["attention_mask"] = mask;
  }

  // Decoded values replace the protobuf's bytes, so a model is held once.
  auto *initializers = model.proto.mutable_graph()->mutable_initializer();
  for (onnx::TensorProto &init : *initializers) {
    Tensor tensor = decodeTensor(init, model.directory, "initializer '" + init.name() + "'");
    tensor.origin = init.name();
    values[init.name()] = constant(std::move(tensor));
    // clear_raw_data() would keep the string's capacity.
    std::string().swap(*init.mutable_raw_data());
    init.clear_float_data();
  }
}

const Symbolic &GraphImporter::lookup(const std::string &name,
                                      const onnx::NodeProto &node) const {
  auto it = values.find(name);
  if (it == values.end())
    failAt(node, "input '" + name + "' is not produced by any earlier node");
  return it->second;
}

void GraphImporter::importNode(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Inputs inputs;
  bool allConstant = true;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    inputs.push_back(lookup(name, node));
    allConstant &= inputs.back()->kind == SymbolicKind::Constant;
  }
  bool standardDomain = node.domain().empty() || node.domain() == "ai.onnx";

  std::vector<Symbolic> outputs;
  if (standardDomain && (op == "Shape" || op == "Size")) {
    if (inputs.size() != 1 || !inputs[0])
      failAt(node, "expects one input");
    const std::vector<int64_t> &shape = inputs[0]->shape;
    if (op == "Size") {
      Tensor size = Tensor::intVector({numElementsOf(shape)});
      size.shape = {};
      outputs.push_back(constant(size));
    } else {
      int64_t rank = static_cast<int64_t>(shape.size());
      int64_t start = intAttribute(node, "start", 0), end = intAttribute(node, "end", rank);
      start = std::clamp(start < 0 ? start + rank : start, int64_t{0}, rank);
      end = std::clamp(end < 0 ? end + rank : end, int64_t{0}, rank);
      outputs.push_back(constant(Tensor::intVector(
          std::vector<int64_t>(shape.begin() + start, shape.begin() + std::max(start, end)))));
    }
  } else if (standardDomain && allConstant) {
    std::vector<const Tensor *> tensors;
    for (const Symbolic &input : inputs)
      tensors.push_back(input ? input->constant.get() : nullptr);
    for (Tensor &result : foldConstantNode(node, tensors))
      outputs.push_back(constant(std::move(result)));
  } else {
    bool readsMask = std::any_of(inputs.begin(), inputs.end(), [](const Symbolic &input) {
      return isKind(input, SymbolicKind::AttentionMask);
    });
    if (readsMask && op != "ReduceSum")
      failAt(node, "without position_ids, the attention mask may only give the positions (its "
                   "length), but this graph uses it otherwise; export the model with position_ids");
    std::string key = standardDomain ? op : node.domain() + ":" + op;
    auto rule = rules.find(key);
    if (rule == rules.end()) {
      if (op == "MatMulNBits" || op == "DequantizeLinear" || op == "QLinearMatMul")
        failAt(node, "quantized weights are not supported yet");
      failAt(node, "this op is not supported on the model's activations");
    }
    outputs = rule->second(*this, node, inputs);
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (i >= static_cast<int>(outputs.size()) || !outputs[i])
      failAt(node, "output " + std::to_string(i) + " ('" + node.output(i) +
                       "') has no meaning the importer knows");
    values[node.output(i)] = outputs[i];
  }
}

void GraphImporter::checkOutputs() {
  const onnx::GraphProto &graph = model.proto.graph();
  mlir::Value logits;
  std::set<std::pair<int64_t, bool>> presents;
  for (const auto &output : graph.output()) {
    const std::string &name = output.name();
    auto it = values.find(name);
    if (it == values.end())
      fail("graph output '" + name + "' is not produced by any node");
    Symbolic value = it->second;
    if (name == "logits") {
      value = asActivation(value, nullptr);
      if (!isKind(value, SymbolicKind::Activation))
        fail("graph output 'logits' is not computed from the hidden state by a linear map");
      logits = value.get()->value;
    } else if (auto cache = parseCacheName(name, "present")) {
      if (!isKind(value, SymbolicKind::KvSequence) || value->layer != cache->layer ||
          value->isKey != cache->isKey)
        fail("graph output '" + name + "' is not past_key_values." +
             std::to_string(cache->layer) + (cache->isKey ? ".key" : ".value") +
             " with this step's entry appended");
      auto record = attentionByLayer.find(cache->layer);
      if (record == attentionByLayer.end())
        fail("graph output '" + name + "': no attention reads layer " +
             std::to_string(cache->layer) + "'s cache");
      mlir::Value expected = cache->isKey ? record->second.key : record->second.value;
      if (value->newEntry != expected)
        fail("graph output '" + name + "' appends a different " +
             (cache->isKey ? "key" : "value") + " than the attention of its layer uses");
      presents.insert({cache->layer, cache->isKey});
    } else {
      fail("graph output '" + name + "' is not part of the decoder signature (logits, "
           "present.N.key/value)");
    }
  }
  if (!logits)
    fail("the graph has no 'logits' output");
  for (int64_t layer : cacheLayers) {
    if (!attentionByLayer.count(layer))
      fail("past_key_values." + std::to_string(layer) + " is never attended to");
    if (!presents.count({layer, true}) || !presents.count({layer, false}))
      fail("the graph has no present." + std::to_string(layer) + ".key/value outputs");
  }

  // The final projection to the vocabulary is the lm_head.
  auto linear = logits.getDefiningOp<LinearOp>();
  if (!linear || linear.getBias())
    fail("graph output 'logits' is not a plain linear map of the hidden state");
  auto head = builder.create<LogitsOp>(loc, linear.getType(), linear.getInput(),
                                       linear.getWeightAttr());
  linear.getResult().replaceAllUsesWith(head.getResult());
  linear.erase();
  auto next = builder.create<ArgmaxOp>(loc, builder.getI64Type(), head.getResult());
  builder.create<mlir::func::ReturnOp>(loc, mlir::ValueRange{head.getResult(), next.getResult()});
  function.setType(builder.getFunctionType(function.getArgumentTypes(),
                                           {head.getType(), builder.getI64Type()}));

  // Rules may leave partial results behind (a linear later rebuilt with its
  // bias); drop what nothing uses.
  auto &ops = function.getBody().front().getOperations();
  for (auto it = ops.rbegin(); it != ops.rend();) {
    mlir::Operation &op = *it++;
    if (mlir::isOpTriviallyDead(&op))
      op.erase();
  }
  // So may weights: one whose users took a scaled copy or rows of it
  // (PlainActivations.cpp). Its declaration goes; the table keeps it, as
  // the source its pieces read on demand.
  for (auto weight : llvm::make_early_inc_range(module->getOps<WeightOp>()))
    if (mlir::SymbolTable::symbolKnownUseEmpty(weight, *module))
      weight.erase();
}

// Every node whose op neither the constant folder nor a rule knows, named
// in one error: a model with three unsupported ops is refused once, with
// all three, rather than three times in turn.
void GraphImporter::checkOpsAreKnown() const {
  std::string unknown;
  int count = 0;
  for (const auto &node : model.proto.graph().node()) {
    const std::string &op = node.op_type();
    bool standardDomain = node.domain().empty() || node.domain() == "ai.onnx";
    bool known = standardDomain ? op == "Shape" || op == "Size" || canFoldOp(op) || rules.count(op)
                                : rules.count(node.domain() + ":" + op) != 0;
    if (known)
      continue;
    bool quantized = op == "MatMulNBits" || op == "DequantizeLinear" || op == "QLinearMatMul";
    std::string name = node.name().empty() ? "<unnamed>" : node.name();
    unknown += std::string(count ? "; " : "") + "ONNX node '" + name + "' (" + op + ")" + (quantized ? ": quantized weights are not supported yet" : "");
    ++count;
  }
  if (count == 1)
    fail(unknown + (unknown.back() == ')' ? ": mkc does not support this op" : ""));
  if (count > 1)
    fail(std::to_string(count) + " nodes use ops mkc does not support: " + unknown);
  for (const auto &node : model.proto.graph().node())
    if (std::string problem = checkAttributes(node); !problem.empty())
      failAt(node, problem);
}

mlir::OwningOpRef<mlir::ModuleOp> GraphImporter::run() {
  checkOpsAreKnown();
  declareInputs();
  // A value no later node reads is dropped, so that a weight's initializer is
  // freed once its copy is in the weight table: the import then holds the
  // model about once, not twice.
  std::map<std::string, int64_t> readsLeft;
  for (const auto &node : model.proto.graph().node())
    for (const std::string &input : node.input())
      ++readsLeft[input];
  for (const auto &output : model.proto.graph().output())
    ++readsLeft[output.name()];
  for (const auto &node : model.proto.graph().node()) {
    importNode(node);
    for (const std::string &input : node.input())
      if (!input.empty() && --readsLeft[input] == 0)
        values.erase(input);
  }
  checkOutputs();
  if (mlir::failed(mlir::verify(*module)))
    fail("the recognized mk IR does not verify (see the diagnostics above)");
  return std::move(module);
}

bool isKind(const Symbolic &value, SymbolicKind kind) { return value && value->kind == kind; }

const Tensor &constantOf(const Symbolic &value) { return *value->constant; }

std::optional<double> scalarOf(const Symbolic &value) {
  if (!isKind(value, SymbolicKind::Constant) || value->constant->numElements() != 1)
    return std::nullopt;
  return value->constant->at(0);
}

std::vector<int64_t> nonUnitDims(const std::vector<int64_t> &shape) {
  std::vector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

static const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                                 const std::string &name) {
  for (const auto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

bool hasAttribute(const onnx::NodeProto &node, const std::string &name) {
  return findAttribute(node, name) != nullptr;
}

int64_t intAttribute(const onnx::NodeProto &node, const std::string &name, int64_t fallback) {
  const auto *attribute = findAttribute(node, name);
  return attribute ? attribute->i() : fallback;
}

float floatAttribute(const onnx::NodeProto &node, const std::string &name, float fallback) {
  const auto *attribute = findAttribute(node, name);
  return attribute ? attribute->f() : fallback;
}

std::vector<int64_t> intsAttribute(const onnx::NodeProto &node, const std::string &name) {
  const auto *attribute = findAttribute(node, name);
  if (!attribute)
    return {};
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace mk::onnx_import

namespace mk {

llvm::Expected<ImportedModel> importOnnxModel(mlir::MLIRContext &context,
                                              const std::string &path) {
  context.getOrLoadDialect<MkDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  try {
    onnx_import::LoadedModel model = onnx_import::loadModel(path);
    ImportedModel imported;
    onnx_import::GraphImporter importer(context, model, imported.weights,
                                        onnx_import::kAbstractPastLength);
    imported.module = importer.run();
    return imported;
  } catch (const onnx_import::ImportError &error) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error.what());
  }
}

} // namespace mk
