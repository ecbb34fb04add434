#include "compiler/taskgraph/LowerToTasks.h"

#include "compiler/dialect/MkDialect.h"
#include "compiler/taskgraph/TileOperations.h"
#include "core/protocol/AttentionLayout.h"
#include "core/weights/IdentityValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mk {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error opError(mlir::Operation *op, const llvm::Twine &message) {
  std::string where;
  llvm::raw_string_ostream os(where);
  op->getLoc().print(os);
  return error("cannot lower '" + op->getName().getStringRef() + "' at " + where +
               " to tasks: " + message);
}

uint64_t lengthOf(mlir::Value vector) {
  return vector.getType().cast<mlir::RankedTensorType>().getDimSize(0);
}

class Lowering {
public:
  Lowering(mlir::ModuleOp module, const TargetDescription &target, int64_t maxContext,
           StepShape shape)
      : module(module), target(target), maxContext(maxContext), shape(shape) {}

  llvm::Expected<TaskGraph> run() {
    if (maxContext <= 0)
      return error("the maximum context must be positive, got " + llvm::Twine(maxContext));
    if (shape.rows <= 0 || shape.rows > kMaxStepRows || shape.sequences <= 0 ||
        shape.sequences > kMaxStepRows)
      return error("a step of " + llvm::Twine(shape.rows) + " rows over " +
                   llvm::Twine(shape.sequences) + " sequences: both must be in [1, " +
                   llvm::Twine(kMaxStepRows) + "]");
    if (target.numSms == 0)
      return error("the target has no SMs");
    auto function = module.lookupSymbol<mlir::func::FuncOp>("decode_step");
    if (!function || function.getBody().empty())
      return error("the module has no func.func @decode_step with a body");
    if (function.getNumArguments() < 2)
      return error("@decode_step must take the token and the position first");
    step = function;
    graph.maxContext = maxContext;
    graph.rows = shape.rows;
    graph.sequences = shape.sequences;
    graph.tokenBuffer = addBuffer("token", BufferKind::Token, shape.rows);

    for (mlir::Operation &op : function.getBody().front()) {
      llvm::Error result =
          llvm::TypeSwitch<mlir::Operation *, llvm::Error>(&op)
              .Case([&](EmbeddingOp embedding) { return lowerEmbedding(embedding); })
              .Case([&](GemvOp gemv) -> llvm::Error {
                if (fusedDowns.contains(gemv.getOperation()))
                  return llvm::Error::success();
                if (GemvOp down = fusableDown(gemv))
                  return lowerMlp(gemv, down);
                return lowerGemv(gemv);
              })
              .Case([&](FusedAttentionOp attention) { return lowerAttention(attention); })
              .Case([&](ArgmaxOp argmax) { return lowerArgmax(argmax); })
              .Case([&](mlir::func::ReturnOp ret) { return lowerReturn(ret); })
              .Default([&](mlir::Operation *other) {
                return opError(other, "no task kind runs it: the fusion passes fold such an op "
                                      "into a gemv or an attention only where a Llama-style "
                                      "layer has it (docs/model-families.md: what the other "
                                      "families need)");
              });
      if (result)
        return std::move(result);
    }
    if (!returned)
      return error("@decode_step has no func.return");
    nameOperations();
    tileOperations(graph, target);
    return std::move(graph);
  }

private:
  uint32_t addBuffer(const std::string &name, BufferKind kind, uint64_t elements) {
    graph.buffers.push_back({name, kind, elements});
    return graph.buffers.size() - 1;
  }

  uint32_t addOperation(Operation operation, mlir::Value result) {
    if (result)
      operation.output = values[result] =
          addBuffer("", BufferKind::Activation, shape.rows * lengthOf(result));
    graph.operations.push_back(std::move(operation));
    return graph.operations.size() - 1;
  }

  llvm::Expected<uint32_t> bufferOf(mlir::Operation *user, mlir::Value value) {
    auto it = values.find(value);
    if (it == values.end())
      return opError(user, "operand is not the result of a lowered op");
    return it->second;
  }

  llvm::Expected<WeightRef> weight(mlir::Operation *user, mlir::FlatSymbolRefAttr symbol) {
    auto declaration = module.lookupSymbol<WeightOp>(symbol.getValue());
    if (!declaration)
      return opError(user, "no mk.weight named " + symbol.getValue());
    auto type = declaration.getType().dyn_cast<mlir::RankedTensorType>();
    if (!type || type.getRank() < 1 || type.getRank() > 2 || !type.hasStaticShape())
      return opError(user, "weight " + symbol.getValue() + " is not a static vector or matrix");
    uint64_t cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
    return WeightRef{symbol.getValue().str(), static_cast<uint64_t>(type.getDimSize(0)), cols};
  }

  llvm::Error weights(mlir::Operation *user, mlir::ArrayAttr symbols,
                      std::vector<WeightRef> &into) {
    if (!symbols)
      return llvm::Error::success();
    for (auto symbol : symbols.getAsRange<mlir::FlatSymbolRefAttr>()) {
      auto ref = weight(user, symbol);
      if (!ref)
        return ref.takeError();
      into.push_back(std::move(*ref));
    }
    return llvm::Error::success();
  }

  llvm::Error lowerEmbedding(EmbeddingOp embedding) {
    if (embedding.getToken() != step.getArgument(0))
      return opError(embedding, "the token must be @decode_step's token argument");
    Operation op;
    op.kind = OpKind::Embed;
    op.input = graph.tokenBuffer;
    auto table = weight(embedding, embedding.getTableAttr());
    if (!table)
      return table.takeError();
    op.weights.push_back(std::move(*table));
    op.inputLength = 1;
    op.outputLength = lengthOf(embedding.getResult());
    addOperation(std::move(op), embedding.getResult());
    return llvm::Error::success();
  }

  // What a Gemv and an Mlp read the same way: the input, its length and the
  // prologue norm.
  llvm::Error lowerPrologue(GemvOp gemv, Operation &op) {
    auto input = bufferOf(gemv, gemv.getInput());
    if (!input)
      return input.takeError();
    op.input = *input;
    op.inputLength = lengthOf(gemv.getInput());
    if (auto norm = gemv.getNormAttr()) {
      auto ref = weight(gemv, norm);
      if (!ref)
        return ref.takeError();
      op.norm = std::move(*ref);
      op.eps = gemv.getEpsAttr() ? gemv.getEpsAttr().getValueAsDouble() : 0.0;
    }
    return llvm::Error::success();
  }

  llvm::Error lowerGemv(GemvOp gemv) {
    Operation op;
    op.kind = OpKind::Gemv;
    if (auto error = lowerPrologue(gemv, op))
      return error;
    // The reader of an attention merged by its reader merges its partials:
    // it carries the attention's geometry (core/taskgraph/TaskGraph.h).
    for (const Operation &attention : graph.operations)
      if (mergedByReader(attention) && attention.output == op.input)
        setAttentionGeometry(op, attentionGeometry(attention));
    if (mergesAttention(op) && target.byHeadWanted())
      return lowerByHead(gemv, std::move(op));
    llvm::StringRef epilogue = gemv.getEpilogue();
    if (epilogue == "silu_mul")
      op.epilogue = Epilogue::SiluMul;
    else if (epilogue == "gelu_tanh_mul")
      op.epilogue = Epilogue::GeluTanhMul;
    else if (epilogue == "residual")
      op.epilogue = Epilogue::Residual;
    else if (epilogue != "none")
      return opError(gemv, "unknown epilogue \"" + epilogue + "\"");
    if (op.epilogue == Epilogue::Residual) {
      if (!gemv.getResidual())
        return opError(gemv, "the residual epilogue needs a residual operand");
      auto residual = bufferOf(gemv, gemv.getResidual());
      if (!residual)
        return residual.takeError();
      op.residual = *residual;
    }
    if (auto error = weights(gemv, gemv.getWeightsAttr(), op.weights))
      return error;
    if (auto error = weights(gemv, gemv.getBiasesAttr(), op.biases))
      return error;
    op.outputLength = lengthOf(gemv.getResult());
    addOperation(std::move(op), gemv.getResult());
    return llvm::Error::success();
  }

  // o_proj projecting by head (Target::oProjByHead; mergesInReader chose
  // it): no epilogue, the residual its output's seed, tiles of one head's
  // columns and as many rows as the SMs leave a head.
  llvm::Error lowerByHead(GemvOp gemv, Operation op) {
    if (auto error = weights(gemv, gemv.getWeightsAttr(), op.weights))
      return error;
    op.outputLength = lengthOf(gemv.getResult());
    op.sliceWidth = static_cast<int64_t>(byHeadTileRows(op.outputLength, op.numHeads));
    size_t seeder = *seederOf(gemv.getResidual());
    uint32_t index = addOperation(std::move(op), gemv.getResult());
    uint32_t output = graph.operations[index].output;
    graph.buffers[output].element = BufferElement::Fixed64;
    graph.operations[seeder].seed = output;
    return llvm::Error::success();
  }

  // With target.fuseMlp: the down of a gated MLP whose gate_up is `gemv`,
  // when the two can be one Mlp operation: gate_up (SiLU-gated, two
  // weights, a norm or none, no bias) feeds only down; down (no norm, no
  // bias) adds a residual that a lowered Gemv produced and can seed, and
  // only Gemvs read its result (they read fixed64 values). Else null.
  GemvOp fusableDown(GemvOp gemv) {
    if (!target.fuseMlp || gemv.getEpilogue() != "silu_mul" || gemv.getBiasesAttr() ||
        !gemv.getWeightsAttr() || gemv.getWeightsAttr().size() != 2 ||
        !gemv.getResult().hasOneUse())
      return nullptr;
    auto down = llvm::dyn_cast<GemvOp>(*gemv.getResult().getUsers().begin());
    if (!down || down.getInput() != gemv.getResult() || down.getEpilogue() != "residual" ||
        !down.getResidual() || down.getNormAttr() || down.getBiasesAttr() ||
        !down.getWeightsAttr() || down.getWeightsAttr().size() != 1)
      return nullptr;
    uint64_t channels = lengthOf(gemv.getResult());
    if (channels % 8 != 0 || lengthOf(down.getInput()) != channels)
      return nullptr;
    for (mlir::Operation *user : down.getResult().getUsers())
      if (!llvm::isa<GemvOp>(user))
        return nullptr;
    if (!seederOf(down.getResidual()))
      return nullptr;
    return down;
  }

  // The index of the lowered Embed or Gemv writing `value` (f32), if it
  // seeds nothing yet.
  std::optional<size_t> seederOf(mlir::Value value) const {
    auto it = values.find(value);
    if (it == values.end())
      return std::nullopt;
    for (size_t index = 0; index < graph.operations.size(); ++index) {
      const Operation &op = graph.operations[index];
      if ((op.kind == OpKind::Gemv || op.kind == OpKind::Embed) && op.output == it->second &&
          op.seed == kNoBuffer && !keepsFixed64(graph, op.output))
        return index;
    }
    return std::nullopt;
  }

  llvm::Error lowerMlp(GemvOp gateUp, GemvOp down) {
    Operation op;
    op.kind = OpKind::Mlp;
    if (auto error = lowerPrologue(gateUp, op))
      return error;
    if (auto error = weights(gateUp, gateUp.getWeightsAttr(), op.weights))
      return error;
    if (auto error = weights(down, down.getWeightsAttr(), op.weights))
      return error;
    op.outputLength = lengthOf(down.getResult());
    // A slice per SM, in whole 16-byte units of a down row.
    uint64_t channels = lengthOf(gateUp.getResult());
    uint64_t perSm = (channels + target.numSms - 1) / target.numSms;
    op.sliceWidth = static_cast<int64_t>((perSm + 7) / 8 * 8);
    size_t seeder = *seederOf(down.getResidual());
    uint32_t index = addOperation(std::move(op), down.getResult());
    uint32_t output = graph.operations[index].output;
    graph.buffers[output].element = BufferElement::Fixed64;
    graph.operations[seeder].seed = output;
    fusedDowns.insert(down.getOperation());
    return llvm::Error::success();
  }

  llvm::Error lowerAttention(FusedAttentionOp attention) {
    auto cache = attention.getCache().dyn_cast<mlir::BlockArgument>();
    if (!cache || cache.getOwner() != &step.getBody().front() || cache.getArgNumber() < 2)
      return opError(attention, "the cache must be one of @decode_step's cache arguments");
    if (attention.getPos() != step.getArgument(1))
      return opError(attention, "the position must be @decode_step's position argument");
    Operation op;
    op.kind = OpKind::Attention;
    op.layer = cache.getArgNumber() - 2;
    // A sliding window the context never outgrows hides nothing.
    if (auto window = attention.getWindow(); window && static_cast<int64_t>(*window) < maxContext)
      op.window = static_cast<int64_t>(*window);
    auto input = bufferOf(attention, attention.getQkv());
    if (!input)
      return input.takeError();
    op.input = *input;
    op.numHeads = attention.getNumHeads();
    op.numKvHeads = attention.getNumKvHeads();
    op.headDim = attention.getHeadDim();
    op.scale = attention.getScaleAttr().getValueAsDouble();
    for (auto [symbol, into] : {std::pair{attention.getQNormAttr(), &op.qNorm},
                                {attention.getKNormAttr(), &op.kNorm}}) {
      if (!symbol)
        continue;
      auto ref = weight(attention, symbol);
      if (!ref)
        return ref.takeError();
      *into = std::move(*ref);
    }
    // The head norm's epsilon: the only norm an attention operation has.
    if (auto eps = attention.getNormEpsAttr())
      op.eps = eps.getValueAsDouble();
    op.rotaryDim = attention.getRotaryDim();
    if (auto invFreq = attention.getInvFreqAttr())
      for (float value : invFreq.getValues<float>())
        op.invFreq.push_back(value);
    op.interleaved = attention.getInterleaved();
    op.inputLength = lengthOf(attention.getQkv());
    op.outputLength = lengthOf(attention.getResult());
    cutAttentionIntoChunks(op, maxContext, target);

    std::string layer = "layer" + std::to_string(op.layer);
    uint64_t slots = shape.sequences * maxContext * op.numKvHeads * op.headDim;
    // The GPU copies a cache's rows in 16-byte units.
    if (target.kvCache == BufferElement::BF16 && op.headDim % 8 != 0)
      return opError(attention, "a bf16 KV cache needs a head dimension that is a multiple of 8, "
                                "this one's is " + llvm::Twine(op.headDim) +
                                " (--kv-cache=f32 keeps it in f32)");
    op.keyCache = addBuffer(layer + ".keys", BufferKind::KVCache, slots);
    op.valueCache = addBuffer(layer + ".values", BufferKind::KVCache, slots);
    graph.buffers[op.keyCache].element = graph.buffers[op.valueCache].element = target.kvCache;
    op.partials = addBuffer(layer + ".partials", BufferKind::Scratch,
                            shape.rows * op.numHeads * op.numChunks * (op.headDim + 2));
    if (mergesInReader(attention)) {
      op.output = values[attention.getResult()] = op.partials;
      graph.operations.push_back(std::move(op));
    } else {
      addOperation(std::move(op), attention.getResult());
    }
    return llvm::Error::success();
  }

  // A by-head tile's rows: as many as the SMs leave a head.
  uint64_t byHeadTileRows(uint64_t rows, uint64_t heads) const {
    uint64_t tilesPerHead = std::max<uint64_t>(target.numSms / heads, 1);
    return (rows + tilesPerHead - 1) / tilesPerHead;
  }

  // Whether the attention's one reader, a Gemv without a prologue norm (its
  // o_proj), is to merge the chunks' partials itself (Target::mergeInOProj
  // or Target::oProjByHead; a decode step only; heads of even length, whose
  // partials the GPU copies 8 bytes at a time).
  bool mergesInReader(FusedAttentionOp attention) const {
    if (!(target.mergeInOProj || target.byHeadWanted()) || shape.rows != 1 ||
        shape.sequences != 1 || attention.getHeadDim() % 2 != 0 ||
        !attention.getResult().hasOneUse())
      return false;
    auto reader = llvm::dyn_cast<GemvOp>(*attention.getResult().getUsers().begin());
    if (!reader || reader.getInput() != attention.getResult() || reader.getNormAttr() ||
        reader.getResidual() == attention.getResult())
      return false;
    if (!target.byHeadWanted())
      return true;
    if (!projectableByHead(attention, reader))
      return false;
    uint64_t tileBytes = byHeadTileRows(lengthOf(reader.getResult()), attention.getNumHeads()) *
                         attention.getHeadDim() * target.bytesPerWeight;
    return target.oProjByHead == TargetDescription::ByHead::On ||
           tileBytes <= TargetDescription::kByHeadMostAutoTileBytes;
  }

  // Whether o_proj can project by head: one weight, no bias, a residual
  // whose producer can seed its fixed64 output, only Gemvs reading that
  // output (they read fixed64 values), heads of whole 16-byte units of bf16
  // weights up to 256 (a warp's lanes a row).
  bool projectableByHead(FusedAttentionOp attention, GemvOp reader) const {
    uint64_t headDim = attention.getHeadDim();
    if (headDim % 8 != 0 || headDim > 256 || attention.getNumHeads() > MK_HEAD_TILE_MOST_HEADS ||
        lengthOf(reader.getResult()) >> MK_HEAD_TILE_ROW_BITS != 0 ||
        reader.getEpilogue() != "residual" ||
        !reader.getResidual() || reader.getBiasesAttr() || !reader.getWeightsAttr() ||
        reader.getWeightsAttr().size() != 1 || !seederOf(reader.getResidual()))
      return false;
    for (mlir::Operation *user : reader.getResult().getUsers())
      if (!llvm::isa<GemvOp>(user))
        return false;
    return true;
  }

  llvm::Error lowerArgmax(ArgmaxOp argmax) {
    Operation op;
    op.kind = OpKind::Argmax;
    auto input = bufferOf(argmax, argmax.getInput());
    if (!input)
      return input.takeError();
    op.input = *input;
    op.inputLength = lengthOf(argmax.getInput());
    op.outputLength = 1;
    op.output = graph.tokenBuffer;
    addOperation(std::move(op), nullptr);
    return llvm::Error::success();
  }

  llvm::Error lowerReturn(mlir::func::ReturnOp ret) {
    if (ret.getNumOperands() != 2 || !ret.getOperand(1).getDefiningOp<ArgmaxOp>())
      return opError(ret, "@decode_step must return the logits and their argmax");
    auto logits = bufferOf(ret, ret.getOperand(0));
    if (!logits)
      return logits.takeError();
    graph.logitsBuffer = *logits;
    returned = true;
    return llvm::Error::success();
  }

  // Layers follow the caches: an attention's layer is its cache's index, the
  // gemv feeding it opens that layer, and the gemvs after it belong to it.
  // Names say the role, which the data flow shows.
  void nameOperations() {
    auto &ops = graph.operations;
    auto producer = [&](uint32_t buffer) -> const Operation * {
      for (const Operation &op : ops)
        if (op.output == buffer && op.kind != OpKind::Argmax)
          return &op;
      return nullptr;
    };
    auto feedsAttention = [&](const Operation &gemv) -> const Operation * {
      for (const Operation &op : ops)
        if (op.kind == OpKind::Attention && op.input == gemv.output)
          return &op;
      return nullptr;
    };

    int32_t layer = -1;
    llvm::StringMap<unsigned> seen;
    for (Operation &op : ops) {
      std::string role;
      switch (op.kind) {
      case OpKind::Embed:
        role = "embedding";
        break;
      case OpKind::Argmax:
        role = "argmax";
        break;
      case OpKind::Attention:
        layer = op.layer;
        role = "attention";
        break;
      case OpKind::Mlp:
        op.layer = layer;
        role = "mlp";
        break;
      case OpKind::Gemv: {
        const Operation *input = producer(op.input);
        if (const Operation *attention = feedsAttention(op)) {
          layer = attention->layer;
          op.layer = layer;
          role = "qkv";
        } else if (op.output == graph.logitsBuffer) {
          role = "lm_head";
        } else {
          op.layer = layer;
          if (isGated(op.epilogue))
            role = "gate_up";
          else if (op.weights.size() == 1 && isIdentityWeightName(op.weights[0].name))
            role = "post_norm"; // mk-post-norm-as-gemv's
          else if (input && input->kind == OpKind::Attention)
            role = "o_proj";
          else if (input && input->kind == OpKind::Gemv && isGated(input->epilogue))
            role = "down";
          else
            role = "gemv";
        }
        break;
      }
      }
      std::string name = op.layer >= 0 ? "layer" + std::to_string(op.layer) + "." + role : role;
      if (unsigned repeats = seen[name]++)
        name += "." + std::to_string(repeats);
      op.name = name;
      if (op.kind != OpKind::Argmax && !mergedByReader(op))
        graph.buffers[op.output].name = name;
    }
  }

  mlir::ModuleOp module;
  const TargetDescription &target;
  int64_t maxContext;
  StepShape shape;
  mlir::func::FuncOp step;
  TaskGraph graph;
  llvm::DenseMap<mlir::Value, uint32_t> values; // SSA value -> its buffer
  bool returned = false;
  llvm::SmallPtrSet<mlir::Operation *, 16> fusedDowns; // lowered into an Mlp
};

} // namespace

llvm::Expected<TaskGraph> lowerToTasks(mlir::ModuleOp fused, const TargetDescription &target,
                                       int64_t maxContext, StepShape shape) {
  return Lowering(fused, target, maxContext, shape).run();
}

} // namespace mk
