#include "compiler/taskgraph/ShardOperations.h"

#include "compiler/taskgraph/TileOperations.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <map>
#include <set>

namespace mk {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "tensor parallel: " + message);
}

class Sharder {
public:
  Sharder(const TaskGraph &whole, int64_t ranks, int64_t rank, const TargetDescription &target,
          std::vector<WeightSlice> &slices)
      : whole(whole), ranks(ranks), rank(rank), target(target), slices(slices) {}

  llvm::Expected<TaskGraph> run() {
    findRoles();
    graph = whole;
    graph.tasks.clear();
    graph.events.clear();
    graph.operations.clear();
    graph.ranks = ranks;
    graph.rank = rank;
    for (uint32_t index = 0; index < whole.operations.size(); ++index) {
      const Operation &op = whole.operations[index];
      if (op.kind == OpKind::Attention) {
        if (auto failed = attention(op))
          return std::move(failed);
      } else if (qkv.count(index)) {
        if (auto failed = columnParallel(op, qkvRows(index)))
          return std::move(failed);
      } else if (gateUp.count(index)) {
        if (auto failed = columnParallel(op, gateUpRows(op)))
          return std::move(failed);
      } else if (rowParallel.count(index)) {
        if (auto failed = partialSums(op, rowParallel[index]))
          return std::move(failed);
      } else {
        graph.operations.push_back(op);
      }
    }
    tileOperations(graph, target);
    return std::move(graph);
  }

private:
  using Rows = std::vector<std::pair<uint64_t, uint64_t>>;

  // Which gemvs feed an attention (qkv) or follow one (o_proj), which are
  // gated MLP inputs (gate_up) and which follow those (down_proj); the
  // columns of the latter two that a rank keeps are its heads' and channels'.
  void findRoles() {
    const auto &ops = whole.operations;
    for (uint32_t a = 0; a < ops.size(); ++a) {
      if (ops[a].kind == OpKind::Attention) {
        for (uint32_t g = 0; g < ops.size(); ++g) {
          if (ops[g].kind != OpKind::Gemv)
            continue;
          if (ops[g].output == ops[a].input)
            qkv[g] = a;
          if (ops[g].input == ops[a].output)
            rowParallel[g] = a;
        }
      }
      if (ops[a].kind == OpKind::Gemv && isGated(ops[a].epilogue)) {
        gateUp.insert(a);
        for (uint32_t g = 0; g < ops.size(); ++g)
          if (ops[g].kind == OpKind::Gemv && ops[g].input == ops[a].output)
            rowParallel[g] = a;
      }
    }
  }

  llvm::Error divides(const Operation &op, uint64_t count, const char *what) {
    if (count % ranks != 0)
      return error("'" + op.name + "' has " + llvm::Twine(count) + " " + what +
                   ", which do not divide among " + llvm::Twine(ranks) + " ranks");
    return llvm::Error::success();
  }

  // This rank's rows of the stacked q | k | v: its q heads, then its k and v heads.
  Rows qkvRows(uint32_t index) {
    const Operation &attention = whole.operations[qkv[index]];
    uint64_t d = attention.headDim, heads = attention.numHeads, kv = attention.numKvHeads;
    uint64_t h = heads / ranks, g = kv / ranks;
    return {{rank * h * d, (rank + 1) * h * d},
            {heads * d + rank * g * d, heads * d + (rank + 1) * g * d},
            {(heads + kv) * d + rank * g * d, (heads + kv) * d + (rank + 1) * g * d}};
  }

  // This rank's channels of gate, then of up.
  Rows gateUpRows(const Operation &op) {
    uint64_t channels = op.outputLength, share = channels / ranks;
    return {{rank * share, (rank + 1) * share},
            {channels + rank * share, channels + (rank + 1) * share}};
  }

  std::string sliceName(const std::string &source, uint64_t r0, uint64_t r1, uint64_t c0,
                        uint64_t c1) {
    return source + "@rank" + std::to_string(rank) + "of" + std::to_string(ranks) + ":rows" +
           std::to_string(r0) + "-" + std::to_string(r1) + ":cols" + std::to_string(c0) + "-" +
           std::to_string(c1);
  }

  WeightRef slice(const WeightRef &source, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) {
    WeightSlice made{sliceName(source.name, r0, r1, c0, c1), source.name, r0, r1, c0, c1};
    slices.push_back(made);
    return {made.name, r1 - r0, c1 - c0};
  }

  // Rows of the stacked weights (and biases), which may span several of them.
  void takeRows(const Operation &op, uint64_t begin, uint64_t end, Operation &into) {
    uint64_t first = 0;
    for (size_t i = 0; i < op.weights.size(); ++i) {
      const WeightRef &weight = op.weights[i];
      uint64_t last = first + weight.rows;
      uint64_t from = std::max(begin, first), to = std::min(end, last);
      if (from < to) {
        into.weights.push_back(slice(weight, from - first, to - first, 0, weight.cols));
        if (!op.biases.empty())
          into.biases.push_back(slice(op.biases[i], from - first, to - first, 0, 1));
      }
      first = last;
    }
  }

  llvm::Error columnParallel(const Operation &op, const Rows &rows) {
    if (isGated(op.epilogue))
      if (auto failed = divides(op, op.outputLength, "channels"))
        return failed;
    Operation sharded = op;
    sharded.weights.clear();
    sharded.biases.clear();
    uint64_t kept = 0;
    for (auto [begin, end] : rows) {
      takeRows(op, begin, end, sharded);
      kept += end - begin;
    }
    sharded.outputLength = isGated(op.epilogue) ? kept / 2 : kept;
    graph.buffers[op.output].elements = graph.rows * sharded.outputLength;
    graph.operations.push_back(std::move(sharded));
    return llvm::Error::success();
  }

  llvm::Error attention(const Operation &op) {
    if (auto failed = divides(op, op.numKvHeads, "KV heads"))
      return failed;
    Operation sharded = op;
    sharded.numHeads = op.numHeads / ranks;
    sharded.numKvHeads = op.numKvHeads / ranks;
    sharded.inputLength = (sharded.numHeads + 2 * sharded.numKvHeads) * op.headDim;
    sharded.outputLength = sharded.numHeads * op.headDim;
    cutAttentionIntoChunks(sharded, graph.maxContext, target);
    uint64_t slot = sharded.numKvHeads * op.headDim;
    graph.buffers[op.output].elements = graph.rows * sharded.outputLength;
    for (uint32_t cache : {op.keyCache, op.valueCache})
      graph.buffers[cache].elements = graph.sequences * graph.maxContext * slot;
    graph.buffers[op.partials].elements =
        graph.rows * sharded.numHeads * sharded.numChunks * (op.headDim + 2);
    graph.operations.push_back(std::move(sharded));
    return llvm::Error::success();
  }

  // o_proj or down_proj: this rank's columns (its heads' or channels'
  // inputs) give a partial sum, which an AllReduce adds to the residual.
  // The bias goes in once: rank 0 adds it, the others add zeros, so that
  // every rank streams the same bytes and gets the same schedule.
  llvm::Error partialSums(const Operation &op, uint32_t feeder) {
    const Operation &producer = whole.operations[feeder];
    uint64_t share = 0;
    if (producer.kind == OpKind::Attention) {
      if (auto failed = divides(producer, producer.numKvHeads, "KV heads"))
        return failed;
      share = producer.numHeads / ranks * producer.headDim;
    } else {
      if (auto failed = divides(producer, producer.outputLength, "channels"))
        return failed;
      share = producer.outputLength / ranks;
    }
    if (op.epilogue != Epilogue::Residual)
      return error("'" + op.name + "' adds no residual: only a residual gemv becomes an "
                   "AllReduce of partial sums");
    Operation partial = op;
    partial.weights.clear();
    partial.biases.clear();
    for (const WeightRef &weight : op.weights)
      partial.weights.push_back(slice(weight, 0, weight.rows, rank * share, (rank + 1) * share));
    for (const WeightRef &bias : op.biases) {
      partial.biases.push_back(slice(bias, 0, bias.rows, 0, 1));
      if (rank != 0)
        slices.back().zero = true;
    }
    partial.inputLength = share;
    partial.epilogue = Epilogue::None;
    partial.output = static_cast<uint32_t>(graph.buffers.size());
    graph.buffers.push_back(
        {op.name + ".partial", BufferKind::Activation, graph.rows * op.outputLength});
    Operation reduce;
    reduce.kind = OpKind::AllReduce;
    reduce.name = op.name + ".allreduce";
    reduce.layer = op.layer;
    reduce.input = partial.output;
    reduce.residual = op.residual;
    reduce.output = op.output;
    reduce.inputLength = reduce.outputLength = op.outputLength;
    graph.operations.push_back(std::move(partial));
    graph.operations.push_back(std::move(reduce));
    return llvm::Error::success();
  }

  const TaskGraph &whole;
  int64_t ranks, rank;
  const TargetDescription &target;
  std::vector<WeightSlice> &slices;
  TaskGraph graph;
  std::map<uint32_t, uint32_t> qkv;         // gemv -> the attention it feeds
  std::map<uint32_t, uint32_t> rowParallel; // gemv -> the attention or gate_up it follows
  std::set<uint32_t> gateUp;
};

} // namespace

llvm::Expected<TaskGraph> shardForRank(const TaskGraph &whole, int64_t ranks, int64_t rank,
                                       const TargetDescription &target,
                                       std::vector<WeightSlice> &slices) {
  if (ranks < 2 || rank < 0 || rank >= ranks)
    return error("rank " + llvm::Twine(rank) + " of " + llvm::Twine(ranks) +
                 ": expected two ranks or more");
  if (whole.ranks != 1)
    return error("the graph is sharded already");
  return Sharder(whole, ranks, rank, target, slices).run();
}

void markRankWaits(TaskGraph &graph) {
  uint32_t argmaxEvent = 0;
  for (const Task &task : graph.tasks)
    if (task.kind == TaskKind::Argmax)
      argmaxEvent = task.trigger;
  // The writes of each buffer, with the event of their task, found once:
  // an 8B model has some 17,000 AllReduce tasks.
  std::map<uint32_t, std::vector<std::pair<BufferRange, uint32_t>>> writesOf;
  for (const Task &writer : graph.tasks)
    for (const BufferRange &write : writer.writes)
      writesOf[write.buffer].push_back({write, writer.trigger});
  for (Task &task : graph.tasks) {
    std::set<uint32_t> peerEvents;
    for (const BufferRange &read : deriveFootprint(graph, task).peerReads)
      for (const auto &[write, trigger] : writesOf[read.buffer])
        if (write.begin < read.end && read.begin < write.end)
          peerEvents.insert(trigger);
    for (Wait &wait : task.waits)
      if ((wait.stepOffset == -1 && wait.event == argmaxEvent) ||
          (wait.stepOffset == 0 && peerEvents.count(wait.event)))
        wait.allRanks = true;
  }
}

} // namespace mk
