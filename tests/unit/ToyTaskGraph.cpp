#include "ToyTaskGraph.h"

#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace mk::toy {

namespace {

struct LayerShape {
  bool headNorms;
  bool qkvBias;
  int64_t rotaryDim;
  bool interleaved;
  int64_t window; // a sliding window's positions, 0: none
};

const LayerShape kLayerShapes[kLayers] = {{true, false, kHeadDim, false, 0},
                                          {false, true, 4, true, 9}};

std::vector<float> inverseFrequencies(int64_t rotaryDim) {
  std::vector<float> invFreq;
  for (int64_t i = 0; i < rotaryDim / 2; ++i)
    invFreq.push_back(std::pow(10000.0f, -2.0f * i / rotaryDim));
  return invFreq;
}

std::string layerName(int64_t layer, const std::string &what) {
  return "layer" + std::to_string(layer) + "." + what;
}

class Builder {
public:
  ToyModel build(uint32_t numSms);

private:
  uint32_t buffer(const std::string &name, BufferKind kind, uint64_t elements) {
    model.graph.buffers.push_back({name, kind, elements});
    return model.graph.buffers.size() - 1;
  }
  uint32_t event(const std::string &name) {
    uint32_t id = model.graph.events.size();
    model.graph.events.push_back({id, name, 0});
    return id;
  }
  uint32_t operation(Operation op) {
    model.graph.operations.push_back(std::move(op));
    return model.graph.operations.size() - 1;
  }
  void task(TaskKind kind, uint32_t op, uint64_t begin, uint64_t end, std::vector<Wait> waits,
            uint32_t trigger, std::vector<BufferRange> reads, std::vector<BufferRange> writes) {
    Task task;
    task.id = model.graph.tasks.size();
    task.kind = kind;
    task.op = op;
    task.begin = begin;
    task.end = end;
    task.waits = std::move(waits);
    task.trigger = trigger;
    task.reads = std::move(reads);
    task.writes = std::move(writes);
    ++model.graph.events[trigger].triggerCount;
    model.graph.tasks.push_back(std::move(task));
  }
  // Values around `center`, spread by `spread`.
  WeightRef weight(const std::string &name, uint64_t rows, uint64_t cols, float center,
                   float spread) {
    Weight weight{name, {int64_t(rows)}, StorageType::F32, {}};
    if (cols != 1)
      weight.shape.push_back(cols);
    std::uniform_real_distribution<float> values(center - spread, center + spread);
    for (uint64_t i = 0; i < rows * cols; ++i)
      weight.values.push_back(values(random));
    model.weights.add(weight);
    return {name, rows, cols};
  }
  WeightRef matrix(const std::string &name, uint64_t rows, uint64_t cols) {
    return weight(name, rows, cols, 0.0f, 1.0f / std::sqrt(float(cols)));
  }
  WeightRef norm(const std::string &name, uint64_t length) {
    return weight(name, length, 1, 1.0f, 0.2f);
  }

  // Row tiles of `op`, each waiting on `ready` and triggering `done`.
  void gemv(Operation op, const std::vector<uint64_t> &cuts, uint32_t ready, uint32_t done);
  uint32_t attention(int64_t layer, uint32_t qkv, uint32_t output, uint32_t ready);

  ToyModel model;
  std::mt19937 random{20240611};
};

void Builder::gemv(Operation op, const std::vector<uint64_t> &cuts, uint32_t ready,
                   uint32_t done) {
  uint32_t index = operation(op);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    std::vector<BufferRange> reads = {{op.input, 0, op.inputLength}};
    if (op.epilogue == Epilogue::Residual)
      reads.push_back({op.residual, cuts[i], cuts[i + 1]});
    task(TaskKind::Gemv, index, cuts[i], cuts[i + 1], {{ready, 0}}, done, reads,
         {{op.output, cuts[i], cuts[i + 1]}});
  }
}

uint32_t Builder::attention(int64_t layer, uint32_t qkv, uint32_t output, uint32_t ready) {
  const LayerShape &shape = kLayerShapes[layer];
  Operation op;
  op.kind = OpKind::Attention;
  op.name = layerName(layer, "attention");
  op.layer = layer;
  op.input = qkv;
  op.output = output;
  op.eps = kEps;
  op.inputLength = (kHeads + 2 * kKvHeads) * kHeadDim;
  op.outputLength = kHeads * kHeadDim;
  op.numHeads = kHeads;
  op.numKvHeads = kKvHeads;
  op.headDim = kHeadDim;
  op.scale = 1.0f / std::sqrt(float(kHeadDim));
  if (shape.headNorms) {
    op.qNorm = norm(layerName(layer, "q_norm"), kHeadDim);
    op.kNorm = norm(layerName(layer, "k_norm"), kHeadDim);
  }
  op.rotaryDim = shape.rotaryDim;
  op.invFreq = inverseFrequencies(shape.rotaryDim);
  op.interleaved = shape.interleaved;
  uint64_t slot = kKvHeads * kHeadDim;
  op.keyCache = buffer(layerName(layer, "keys"), BufferKind::KVCache, kMaxContext * slot);
  op.valueCache = buffer(layerName(layer, "values"), BufferKind::KVCache, kMaxContext * slot);
  op.window = shape.window;
  op.chunkSize = kChunkSize;
  op.numChunks = (attentionReach(kMaxContext, shape.window) + kChunkSize - 1) / kChunkSize;
  op.chunksPerRound = op.numChunks;
  uint64_t partial = kHeadDim + 2, chunks = op.numChunks, group = kHeads / kKvHeads;
  op.partials = buffer(layerName(layer, "partials"), BufferKind::Scratch, kHeads * chunks * partial);
  uint32_t index = operation(op);

  uint32_t done = event(layerName(layer, "attention"));
  for (uint64_t g = 0; g < kKvHeads; ++g) {
    uint32_t chunked = event(layerName(layer, "chunked" + std::to_string(g)));
    BufferRange keys{op.keyCache, g * kHeadDim, (g + 1) * kHeadDim};
    BufferRange values{op.valueCache, g * kHeadDim, (g + 1) * kHeadDim};
    uint64_t k = kHeads * kHeadDim + g * kHeadDim, v = k + kKvHeads * kHeadDim;
    std::vector<BufferRange> inputs = {{qkv, g * group * kHeadDim, (g + 1) * group * kHeadDim},
                                       {qkv, k, k + kHeadDim},
                                       {qkv, v, v + kHeadDim}};
    for (uint64_t c = 0; c < chunks; ++c) {
      // Chunk 0 writes this step's k and v slots; every chunk its partials.
      std::vector<BufferRange> writes;
      if (c == 0)
        writes = {keys, values};
      for (uint64_t h = g * group; h < (g + 1) * group; ++h)
        writes.push_back({op.partials, (h * chunks + c) * partial, (h * chunks + c + 1) * partial});
      task(TaskKind::AttentionChunk, index, g, c, {{ready, 0}}, chunked, inputs, writes);
    }
    // The merge of the group's q heads, whole (as an inline merge's tile).
    task(TaskKind::AttentionMerge, index, g * group * kHeadDim, (g + 1) * group * kHeadDim,
         {{chunked, 0}}, done,
         {{op.partials, g * group * chunks * partial, (g + 1) * group * chunks * partial}},
         {{output, g * group * kHeadDim, (g + 1) * group * kHeadDim}});
  }
  return done;
}

ToyModel Builder::build(uint32_t numSms) {
  TaskGraph &graph = model.graph;
  graph.maxContext = kMaxContext;
  graph.tokenBuffer = buffer("token", BufferKind::Token, 1);
  uint32_t x = buffer("embedded", BufferKind::Activation, kHidden);
  uint32_t argmaxDone = event("argmax");
  uint32_t ready = event("embed");

  Operation embed;
  embed.kind = OpKind::Embed;
  embed.name = "embed";
  embed.input = graph.tokenBuffer;
  embed.output = x;
  embed.weights = {matrix("embed", kVocab, kHidden)};
  embed.inputLength = 1;
  embed.outputLength = kHidden;
  uint32_t embedOp = operation(embed);
  for (uint64_t begin : {0, 8})
    task(TaskKind::Embed, embedOp, begin, begin + 8, {{argmaxDone, -1}}, ready,
         {{graph.tokenBuffer, 0, 1}}, {{x, begin, begin + 8}});

  for (int64_t layer = 0; layer < kLayers; ++layer) {
    uint64_t qkvRows = (kHeads + 2 * kKvHeads) * kHeadDim;
    Operation qkv;
    qkv.kind = OpKind::Gemv;
    qkv.name = layerName(layer, "qkv");
    qkv.layer = layer;
    qkv.input = x;
    qkv.output = buffer(layerName(layer, "qkv"), BufferKind::Activation, qkvRows);
    qkv.weights = {matrix(layerName(layer, "q"), kHeads * kHeadDim, kHidden),
                   matrix(layerName(layer, "k"), kKvHeads * kHeadDim, kHidden),
                   matrix(layerName(layer, "v"), kKvHeads * kHeadDim, kHidden)};
    if (kLayerShapes[layer].qkvBias)
      for (const char *part : {"q", "k", "v"})
        qkv.biases.push_back(weight(layerName(layer, part + std::string("_bias")),
                                    qkv.weights[qkv.biases.size()].rows, 1, 0.0f, 0.5f));
    qkv.norm = norm(layerName(layer, "input_norm"), kHidden);
    qkv.eps = kEps;
    qkv.inputLength = kHidden;
    qkv.outputLength = qkvRows;
    uint32_t qkvDone = event(qkv.name);
    gemv(qkv, {0, 16, 32, 48, 64}, ready, qkvDone);

    uint32_t attended = buffer(layerName(layer, "attended"), BufferKind::Activation, kHeads * kHeadDim);
    uint32_t attentionDone = attention(layer, qkv.output, attended, qkvDone);

    Operation o;
    o.kind = OpKind::Gemv;
    o.name = layerName(layer, "o");
    o.layer = layer;
    o.input = attended;
    o.output = buffer(layerName(layer, "hidden"), BufferKind::Activation, kHidden);
    o.residual = x;
    o.weights = {matrix(layerName(layer, "o"), kHidden, kHeads * kHeadDim)};
    o.epilogue = Epilogue::Residual;
    o.inputLength = kHeads * kHeadDim;
    o.outputLength = kHidden;
    uint32_t oDone = event(o.name);
    gemv(o, {0, 8, 16}, attentionDone, oDone);

    Operation gateUp;
    gateUp.kind = OpKind::Gemv;
    gateUp.name = layerName(layer, "gate_up");
    gateUp.layer = layer;
    gateUp.input = o.output;
    gateUp.output = buffer(layerName(layer, "activated"), BufferKind::Activation, kIntermediate);
    gateUp.weights = {matrix(layerName(layer, "gate"), kIntermediate, kHidden),
                      matrix(layerName(layer, "up"), kIntermediate, kHidden)};
    gateUp.norm = norm(layerName(layer, "post_norm"), kHidden);
    gateUp.eps = kEps;
    gateUp.epilogue = Epilogue::SiluMul;
    gateUp.inputLength = kHidden;
    gateUp.outputLength = kIntermediate;
    uint32_t gateUpDone = event(gateUp.name);
    gemv(gateUp, {0, 8, 16, 24}, oDone, gateUpDone);

    Operation down;
    down.kind = OpKind::Gemv;
    down.name = layerName(layer, "down");
    down.layer = layer;
    down.input = gateUp.output;
    down.output = buffer(layerName(layer, "out"), BufferKind::Activation, kHidden);
    down.residual = o.output;
    down.weights = {matrix(layerName(layer, "down"), kHidden, kIntermediate)};
    down.epilogue = Epilogue::Residual;
    down.inputLength = kIntermediate;
    down.outputLength = kHidden;
    ready = event(down.name);
    gemv(down, {0, 8, 16}, gateUpDone, ready);
    x = down.output;
  }

  Operation head;
  head.kind = OpKind::Gemv;
  head.name = "lm_head";
  head.input = x;
  head.output = graph.logitsBuffer = buffer("logits", BufferKind::Activation, kVocab);
  head.weights = {matrix("lm_head", kVocab, kHidden)};
  head.norm = norm("final_norm", kHidden);
  head.eps = kEps;
  head.inputLength = kHidden;
  head.outputLength = kVocab;
  uint32_t headDone = event(head.name);
  gemv(head, {0, 13, 25, 37}, ready, headDone);

  Operation argmax;
  argmax.kind = OpKind::Argmax;
  argmax.name = "argmax";
  argmax.input = graph.logitsBuffer;
  argmax.output = graph.tokenBuffer;
  argmax.inputLength = kVocab;
  argmax.outputLength = 1;
  task(TaskKind::Argmax, operation(argmax), 0, kVocab, {{headDone, 0}}, argmaxDone,
       {{graph.logitsBuffer, 0, kVocab}}, {{graph.tokenBuffer, 0, 1}});

  // The weights each tile streams, as the compiler's tiling counts them.
  for (Task &task : graph.tasks)
    task.weightBytes = describeKind(task.kind).weightElements(graph.operations[task.op], task) *
                       kBytesPerStreamedWeight;
  model.schedule.numSms = numSms;
  model.schedule.queues.resize(numSms);
  for (const Task &task : graph.tasks)
    model.schedule.queues[task.id % numSms].push_back(task.id);
  return std::move(model);
}

} // namespace

ToyModel buildToyModel(uint32_t numSms) { return Builder().build(numSms); }

void addLogitPicks(TaskGraph &graph) {
  uint32_t picks = graph.buffers.size();
  uint32_t tiles = 0;
  for (const Task &task : graph.tasks)
    tiles += graph.operations[task.op].output == graph.logitsBuffer;
  graph.buffers.push_back({"logits.picks", BufferKind::Scratch, 2 * uint64_t(tiles) * graph.rows});
  for (Operation &op : graph.operations)
    if (op.output == graph.logitsBuffer || op.kind == OpKind::Argmax) {
      op.picks = picks;
      op.numPicks = tiles;
    }
  uint32_t ordinal = 0;
  for (Task &task : graph.tasks) {
    if (graph.operations[task.op].picks == kNoBuffer)
      continue;
    if (task.kind == TaskKind::Gemv)
      task.ordinal = ordinal++;
    TaskFootprint footprint = deriveFootprint(graph, task);
    task.reads = footprint.reads;
    task.writes = footprint.writes;
  }
}

void inlineMerges(ToyModel &model) {
  for (Task &task : model.graph.tasks)
    task.runsInline = task.kind == TaskKind::AttentionMerge;
  for (std::vector<uint32_t> &queue : model.schedule.queues)
    std::erase_if(queue, [&](uint32_t id) { return model.graph.tasks[id].runsInline; });
}

void makeRows(TaskGraph &graph, int64_t rows, int64_t sequences) {
  graph.rows = rows;
  graph.sequences = sequences;
  for (Buffer &buffer : graph.buffers)
    buffer.elements *= buffer.kind == BufferKind::KVCache ? sequences : rows;
  for (Task &task : graph.tasks) {
    TaskFootprint footprint = deriveFootprint(graph, task);
    task.reads = footprint.reads;
    task.writes = footprint.writes;
  }
}

uint32_t findTask(const TaskGraph &graph, TaskKind kind, const std::string &opName,
                  uint64_t begin) {
  for (const Task &task : graph.tasks)
    if (task.kind == kind && graph.operations[task.op].name == opName && task.begin == begin)
      return task.id;
  throw std::logic_error("the toy graph has no such task: " + opName);
}

ToyReference::ToyReference(const WeightTable &weights) : weights(weights) {
  for (int64_t layer = 0; layer < kLayers; ++layer)
    caches.emplace_back(kMaxContext, kKvHeads, kHeadDim);
}

std::span<const float> ToyReference::weight(const std::string &name) const {
  const Weight *found = weights.find(name);
  if (!found)
    throw std::logic_error("the toy model has no weight " + name);
  return found->values;
}

std::vector<float> ToyReference::step(int64_t token) {
  using std::vector;
  auto linear = [&](std::span<const float> x, const std::string &name, size_t rows,
                    std::span<const float> bias = {}) {
    vector<float> y(rows);
    kernels::linear(x, weight(name), bias, y);
    return y;
  };
  auto rmsNorm = [&](std::span<const float> x, const std::string &name) {
    vector<float> y(x.size());
    kernels::rmsNorm(x, weight(name), kEps, y);
    return y;
  };

  std::span<const float> row = weight("embed").subspan(token * kHidden, kHidden);
  vector<float> x(row.begin(), row.end());
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    const LayerShape &shape = kLayerShapes[layer];
    auto name = [&](const std::string &what) { return layerName(layer, what); };
    auto bias = [&](const std::string &what) {
      return shape.qkvBias ? weight(name(what + "_bias")) : std::span<const float>();
    };
    vector<float> normed = rmsNorm(x, name("input_norm"));
    vector<float> q = linear(normed, name("q"), kHeads * kHeadDim, bias("q"));
    vector<float> k = linear(normed, name("k"), kKvHeads * kHeadDim, bias("k"));
    vector<float> v = linear(normed, name("v"), kKvHeads * kHeadDim, bias("v"));
    if (shape.headNorms) {
      vector<float> qn(q.size()), kn(k.size());
      kernels::headRmsNorm(q, weight(name("q_norm")), kEps, kHeadDim, qn);
      kernels::headRmsNorm(k, weight(name("k_norm")), kEps, kHeadDim, kn);
      q = qn;
      k = kn;
    }
    vector<float> invFreq = inverseFrequencies(shape.rotaryDim);
    kernels::RotaryConfig rotary{kHeadDim, shape.rotaryDim, invFreq, shape.interleaved};
    vector<float> qr(q.size()), kr(k.size());
    kernels::rotary(q, rotary, position, qr);
    kernels::rotary(k, rotary, position, kr);
    vector<float> attended(kHeads * kHeadDim);
    kernels::attention(qr, kr, v, caches[layer], position, kHeads,
                       1.0f / std::sqrt(float(kHeadDim)), attended, shape.window);
    vector<float> hidden(kHidden);
    kernels::add(x, linear(attended, name("o"), kHidden), hidden);
    vector<float> postNormed = rmsNorm(hidden, name("post_norm"));
    vector<float> activated(kIntermediate);
    kernels::siluMul(linear(postNormed, name("gate"), kIntermediate),
                     linear(postNormed, name("up"), kIntermediate), activated);
    kernels::add(hidden, linear(activated, name("down"), kHidden), x);
  }
  ++position;
  return linear(rmsNorm(x, "final_norm"), "lm_head", kVocab);
}

} // namespace mk::toy
