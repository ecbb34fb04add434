// Rules for attention over the KV cache: q.k^T (with any scale split between
// q and k), the mask (all visible in a decode step), softmax, and the product
// with v, or the opset 23 Attention op that says all of that at once. The
// result is one mk.attention, which also writes this step's key and value
// into the layer's cache.
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ImportError.h"

#include <cmath>

namespace mk::onnx_import {

namespace {

using Outputs = std::vector<Symbolic>;
using Kind = SymbolicKind;

// The axes of a KV sequence without its unit axes, e.g. "HDT".
std::string nonUnitAxes(const SymbolicValue &sequence) {
  std::string axes;
  for (size_t i = 0; i < sequence.shape.size(); ++i)
    if (sequence.shape[i] != 1)
      axes += sequence.axes[i];
  return axes;
}

// Checks that a KV sequence serves `heads` query heads. A MatMul needs the
// KV heads repeated to one per query head (or a single one, broadcast); the
// Attention op groups query heads over unrepeated KV heads itself.
void checkHeads(const onnx::NodeProto &node, const SymbolicValue &sequence, int64_t heads,
                const std::string &expectedTail, bool groupsItself = false) {
  std::string axes = nonUnitAxes(sequence);
  int64_t kvHeads = sequence.axisSize;
  if (axes.size() < 2 || axes.substr(axes.size() - 2) != expectedTail)
    failAt(node, std::string("the ") + (sequence.isKey ? "keys" : "values") +
                     " are laid out with axes '" + axes + "', expected '..." + expectedTail + "'");
  std::string headAxes = axes.substr(0, axes.size() - 2);
  int64_t size = 1;
  for (size_t i = 0; i < sequence.shape.size(); ++i)
    if (sequence.shape[i] != 1 && headAxes.find(sequence.axes[i]) != std::string::npos)
      size *= sequence.shape[i];
  bool ok = headAxes.empty() ? kvHeads == 1
            : headAxes == "H" ? size == heads
            : headAxes == "G" ? size == heads && kvHeads == 1
            : headAxes == "K" ? size == kvHeads && (kvHeads == heads ||
                                                       (groupsItself && heads % kvHeads == 0))
                              : false;
  if (!ok)
    failAt(node, "the KV cache's " + std::to_string(kvHeads) + " heads (axes '" + axes +
                     "') do not serve " + std::to_string(heads) + " query heads");
}

mlir::Value emitAttention(GraphImporter &importer, const onnx::NodeProto &node, mlir::Value q,
                          const SymbolicValue &keys, const SymbolicValue &values, int64_t heads,
                          int64_t headDim, double scale, int64_t window) {
  if (keys.layer != values.layer || !keys.isKey || values.isKey)
    failAt(node, "keys and values come from different caches");
  int64_t layer = keys.layer;
  if (importer.attentionByLayer.count(layer))
    failAt(node, "a second attention over layer " + std::to_string(layer) + "'s cache");
  importer.attentionByLayer[layer] = {keys.newEntry, values.newEntry};
  auto &b = importer.builder;
  auto attention = b.create<AttentionOp>(
      importer.loc, importer.vectorType(heads * headDim), q, keys.newEntry, values.newEntry,
      importer.cacheArgument(layer), importer.positionArgument(), b.getI64IntegerAttr(heads),
      b.getI64IntegerAttr(keys.axisSize), b.getI64IntegerAttr(headDim),
      b.getF32FloatAttr(static_cast<float>(scale)),
      window ? b.getI64IntegerAttr(window) : nullptr);
  return attention.getResult();
}

Outputs softmax(GraphImporter &, const onnx::NodeProto &node, const Inputs &inputs) {
  const Symbolic &scores = inputs.at(0);
  int64_t rank = static_cast<int64_t>(scores->shape.size());
  if (!isKind(scores, Kind::Scores) ||
      normalizeAxis(intAttribute(node, "axis", -1), rank) != rank - 1)
    failAt(node, "understood only as the attention softmax over cached positions");
  auto value = std::make_shared<SymbolicValue>(*scores);
  value->kind = Kind::Probabilities;
  return {value};
}

// The KV sequence an Attention op sees: given whole, or as this step's entry
// plus the past cache.
std::shared_ptr<SymbolicValue> sequenceOperand(const onnx::NodeProto &node, const Symbolic &entry,
                                               const Symbolic &past) {
  if (isKind(entry, Kind::KvSequence) && !past)
    return std::make_shared<SymbolicValue>(*entry);
  if (isKind(entry, Kind::Activation) && isKind(past, Kind::PastCache)) {
    auto sequence = std::make_shared<SymbolicValue>(*past);
    sequence->kind = Kind::KvSequence;
    sequence->shape[2] += 1;
    sequence->newEntry = entry->value;
    if (entry->numElements() != past->axisSize * past->shape[3])
      failAt(node, "this step's entry does not fit the past cache " + shapeText(past->shape));
    return sequence;
  }
  failAt(node, "the keys and values must be the KV cache with this step appended");
}

// ONNX Attention (opset 23).
Outputs attentionOp(GraphImporter &importer, const onnx::NodeProto &node, const Inputs &inputs) {
  auto input = [&](size_t i) { return inputs.size() > i ? inputs[i] : nullptr; };
  const Symbolic &q = inputs.at(0);
  if (!isKind(q, Kind::Activation))
    failAt(node, "the query is not an activation");
  if (floatAttribute(node, "softcap", 0.0f) != 0.0f)
    failAt(node, "attention softcap is not supported yet");
  if (input(6))
    failAt(node, "nonpad_kv_seqlen is not supported");
  int64_t window = 0;
  if (Symbolic mask = input(3)) {
    if (!isKind(mask, Kind::Constant))
      failAt(node, "the attention mask must be constant for a decode step");
    window = slidingWindowOf(node, constantOf(mask));
  }
  auto keys = sequenceOperand(node, inputs.at(1), input(4));
  auto values = sequenceOperand(node, inputs.at(2), input(5));
  keys->isKey = true;
  values->isKey = false;
  int64_t heads, headDim;
  if (q->shape.size() == 4) {
    heads = q->shape[1];
    headDim = q->shape[3];
  } else {
    heads = intAttribute(node, "q_num_heads", 0);
    if (heads <= 0 || q->numElements() % heads != 0)
      failAt(node, "a 3-D query needs q_num_heads");
    headDim = q->numElements() / heads;
  }
  checkHeads(node, *keys, heads, "TD", true);
  checkHeads(node, *values, heads, "TD", true);
  double scale = floatAttribute(node, "scale", 0.0f);
  if (!hasAttribute(node, "scale"))
    scale = 1.0 / std::sqrt(static_cast<double>(headDim));
  scale *= keys->scale;
  mlir::Value result =
      emitAttention(importer, node, q->value, *keys, *values, heads, headDim, scale, window);
  Outputs outputs = {importer.activation(result, q->shape)};
  if (input(4)) {
    outputs.push_back(keys);
    outputs.push_back(values);
  }
  return outputs;
}

// com.microsoft GroupQueryAttention, as onnxruntime-genai's builder emits it
// for a decode step: separate q, k, v of this token, the past caches, the
// position as seqlens_k, and optionally the rotary embedding inside.
Outputs groupQueryAttention(GraphImporter &importer, const onnx::NodeProto &node,
                            const Inputs &inputs) {
  auto input = [&](size_t i) { return inputs.size() > i ? inputs[i] : nullptr; };
  Symbolic q = inputs.at(0), k = input(1), v = input(2);
  int64_t heads = intAttribute(node, "num_heads", 0), kvHeads = intAttribute(node, "kv_num_heads", 0);
  if (!isKind(q, Kind::Activation) || heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    failAt(node, "the query is not an activation, or num_heads / kv_num_heads are not usable");
  if (!k && !v) {
    // Packed: the query holds q | k | v of this token.
    int64_t headDim = q->numElements() / (heads + 2 * kvHeads);
    if (headDim * (heads + 2 * kvHeads) != q->numElements())
      failAt(node, "a packed q|k|v of " + std::to_string(q->numElements()) +
                       " entries does not split into num_heads + 2 kv_num_heads heads");
    auto part = [&](int64_t offset, int64_t length) {
      auto slice = importer.builder.create<SliceOp>(importer.loc, importer.vectorType(length),
                                                    q->value,
                                                    importer.builder.getI64IntegerAttr(offset));
      std::vector<int64_t> shape = q->shape;
      shape.back() = length;
      return importer.activation(slice.getResult(), shape);
    };
    int64_t qLength = heads * headDim, kvLength = kvHeads * headDim;
    k = part(qLength, kvLength);
    v = part(qLength + kvLength, kvLength);
    q = part(0, qLength);
  }
  if (!k || !v || q->numElements() % heads != 0)
    failAt(node, "needs key and value, or a packed q|k|v query");
  int64_t localWindow = intAttribute(node, "local_window_size", -1);
  if (localWindow != -1 && localWindow <= 0)
    failAt(node, "local_window_size is " + std::to_string(localWindow) +
                     ": expected -1 (none) or a positive number of positions");
  // onnxruntime's window counts the step's own position, as mk.attention's does.
  int64_t window = localWindow == -1 ? 0 : localWindow;
  if (floatAttribute(node, "softcap", 0.0f) != 0.0f)
    failAt(node, "attention softcap is not supported yet");
  Symbolic seqlens = input(5);
  if (!isKind(seqlens, Kind::Position) || seqlens->positionOffset != 0)
    failAt(node, "seqlens_k must be the number of past tokens, taken from the attention mask");
  int64_t headDim = q->numElements() / heads;

  if (!isKind(k, Kind::Activation) || !isKind(v, Kind::Activation))
    failAt(node, "key and value must be this token's activations");
  mlir::Value query = q->value, key = k->value;
  if (intAttribute(node, "do_rotary", 0)) {
    if (!isKind(input(7), Kind::Constant) || !isKind(input(8), Kind::Constant))
      failAt(node, "do_rotary needs constant cos/sin caches");
    std::vector<float> freqs = freqsFromTables(node, constantOf(input(7)), constantOf(input(8)));
    bool interleaved = intAttribute(node, "rotary_interleaved", 0) != 0;
    query = emitRotary(importer, node, query, q->shape, headDim, freqs, interleaved)->value;
    key = emitRotary(importer, node, key, k->shape, headDim, freqs, interleaved)->value;
  }
  auto keys = sequenceOperand(node, importer.activation(key, k->shape), input(3));
  auto values = sequenceOperand(node, v, input(4));
  keys->isKey = true;
  values->isKey = false;
  double scale = hasAttribute(node, "scale") ? floatAttribute(node, "scale", 0.0f)
                                             : 1.0 / std::sqrt(static_cast<double>(headDim));
  mlir::Value result =
      emitAttention(importer, node, query, *keys, *values, heads, headDim, scale, window);
  return {importer.activation(result, q->shape), keys, values};
}

} // namespace

Outputs attentionMatMul(GraphImporter &importer, const onnx::NodeProto &node,
                        const Inputs &inputs) {
  const Symbolic &a = inputs.at(0), &b = inputs.at(1);
  bool query = isKind(a, Kind::Activation) || isKind(a, Kind::ScaledActivation);
  if (query && isKind(b, Kind::KvSequence) && b->isKey) {
    int64_t headDim = a->shape.back(), heads = a->numElements() / headDim;
    checkHeads(node, *b, heads, "DT");
    auto scores = std::make_shared<SymbolicValue>(*b);
    scores->kind = Kind::Scores;
    scores->scale = a->scale * b->scale;
    scores->query = a->value;
    scores->keyEntry = b->newEntry;
    scores->shape = a->shape;
    int64_t time = 1;
    for (size_t i = 0; i < b->shape.size(); ++i)
      if (b->axes[i] == 'T')
        time = b->shape[i];
    scores->shape.back() = time;
    return {scores};
  }
  if (isKind(a, Kind::Probabilities) && isKind(b, Kind::KvSequence) && !b->isKey) {
    int64_t headDim = 1;
    for (size_t i = 0; i < b->shape.size(); ++i)
      if (b->axes[i] == 'D')
        headDim = b->shape[i];
    int64_t heads = a->numElements() / a->shape.back();
    checkHeads(node, *b, heads, "TD");
    if (b->layer != a->layer)
      failAt(node, "attention weights and values come from different layers");
    SymbolicValue keys = *a;
    keys.kind = Kind::KvSequence;
    keys.isKey = true;
    keys.newEntry = a->keyEntry;
    mlir::Value result =
        emitAttention(importer, node, a->query, keys, *b, heads, headDim, a->scale, a->window);
    std::vector<int64_t> shape = a->shape;
    shape.back() = headDim;
    return {importer.activation(result, shape)};
  }
  failAt(node, "a matrix product the importer does not understand");
}

int64_t slidingWindowOf(const onnx::NodeProto &node, const Tensor &mask) {
  // Hidden: false in a boolean mask, or a large negative number added to the
  // scores (HF adds the dtype's lowest value, or -inf).
  auto hidden = [&](int64_t i) {
    return mask.kind == ElementKind::Bool ? mask.ints[i] == 0 : mask.at(i) <= -1e4;
  };
  auto visible = [&](int64_t i) {
    return mask.kind == ElementKind::Bool ? mask.ints[i] != 0 : mask.at(i) == 0.0;
  };
  int64_t positions = mask.shape.empty() ? 1 : mask.shape.back();
  int64_t rows = positions == 0 ? 0 : mask.numElements() / positions;
  int64_t hiddenPrefix = -1;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = row * positions, t = 0;
    while (t < positions && hidden(base + t))
      ++t;
    int64_t prefix = t;
    while (t < positions && visible(base + t))
      ++t;
    if (t != positions || prefix == positions || (hiddenPrefix >= 0 && prefix != hiddenPrefix))
      failAt(node, "the attention mask of a decode step hides positions other than the oldest "
                   "(only a sliding window is supported, not padding or other masks)");
    hiddenPrefix = prefix;
  }
  return hiddenPrefix > 0 ? positions - hiddenPrefix : 0;
}

void addAttentionRules(std::map<std::string, Rule> &rules) {
  rules["Softmax"] = softmax;
  rules["Attention"] = attentionOp;
  rules["com.microsoft:GroupQueryAttention"] = groupQueryAttention;
}

} // namespace mk::onnx_import
