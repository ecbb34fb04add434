// What one task sees while it runs: its operation, the weights that
// operation names, the step's rows (each a sequence, a position and maybe a
// given token), and loads and stores on the executor's memory. Task functions copy what they read into local vectors
// and write results back in one store per range, as the GPU kernel stages
// through shared memory; in checked mode those loads and stores are where
// races are caught.
#ifndef MKC_RUNTIME_CPU_TASKCONTEXT_H
#define MKC_RUNTIME_CPU_TASKCONTEXT_H

#include "core/protocol/Sampling.h"
#include "core/taskgraph/TaskGraph.h"
#include "runtime/cpu/ExecutorMemory.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mk::cpu {

// A matrix as the executor reads it: f32 values, or the bf16 bits of a
// loaded .mk's mapping, widened a tile at a time (widening is exact, so both
// give the same bits).
struct BoundMatrix {
  std::span<const float> f32;
  std::span<const uint16_t> bf16;

  // Elements [begin, begin + count): a view of the f32 values, or the bf16
  // ones widened into `scratch`.
  std::span<const float> elements(uint64_t begin, uint64_t count,
                                  std::vector<float> &scratch) const;
};

// The weights of one operation, found by name once, before any step.
struct BoundOperation {
  std::vector<BoundMatrix> weights;
  std::vector<std::span<const float>> biases;
  std::span<const float> norm, qNorm, kNorm;
};

// What the token-picking task needs besides the logits: the request's
// settings and, per sequence, the context's tokens by position (the launch
// writes each picked token that is fed at the next position), or nullptr
// when the context is unknown (no repetition penalty then).
struct TokenChoice {
  MkSamplingSettings settings = mk_sampling_greedy();
  std::vector<std::vector<int64_t>> *contextTokens = nullptr;
};

// One row of a step (core/taskgraph/StepRows.h). An inactive row has
// nothing to do this step (past the end of a prompt, a finished sequence):
// it is fed token 0, attends to nothing, writes no KV slot and picks no
// token, so that every task still writes what its footprint says.
struct StepRow {
  int64_t sequence = 0;
  int64_t position = 0;
  std::optional<int64_t> forcedToken; // else the row's pick of the step before
  bool active = true;
};

struct StepInput {
  int64_t step = 0;  // within the launch
  int64_t stamp = 0; // the step's number in the executor's life (checked mode)
  std::vector<StepRow> rows; // one per row of the graph's step
  std::vector<int64_t> *argmaxTokens = nullptr; // [step][row] of the launch, -1: none
  const TokenChoice *choice = nullptr;          // nullptr: greedy
};

class TaskContext {
public:
  // `ranks`: tensor parallel, every rank's memory by rank (this one's among
  // them); nullptr for one rank.
  TaskContext(const TaskGraph &graph, const Task &task, const BoundOperation &weights,
              ExecutorMemory &memory, const StepInput &input,
              const std::vector<ExecutorMemory *> *ranks = nullptr)
      : task(task), op(graph.operations[task.op]), weights(weights), graph(graph),
        memory(memory), input(input), ranks(ranks) {}

  const Task &task;
  const Operation &op;
  const BoundOperation &weights;

  uint64_t rows() const { return input.rows.size(); }
  const StepRow &row(uint64_t r) const { return input.rows[r]; }

  // Elements [begin, begin + count) of row `r` of an Activation or Scratch
  // buffer; a Fixed64 buffer's converted to and from f32
  // (core/protocol/FixedPoint.h).
  std::vector<float> load(uint32_t buffer, uint64_t r, uint64_t begin, uint64_t count);
  void store(uint32_t buffer, uint64_t r, uint64_t begin, std::span<const float> values);
  // Adds `values`, each rounded to fixed point, into those elements of a
  // Fixed64 buffer, which this step's seed must have written. (Checked mode
  // catches an addition before the seed; a reader that misses an addition
  // is the validator's to refuse: the stamps do not count additions.)
  void accumulate(uint32_t buffer, uint64_t r, uint64_t begin, std::span<const float> values);
  // KV head `kvHead`'s `headDim` elements of a KV cache at `position` of
  // `sequence` (core/protocol/AttentionLayout.h's cacheEntry: head by
  // head); a bf16 cache keeps what is stored rounded to bf16.
  std::vector<float> loadSlot(uint32_t cache, int64_t sequence, int64_t position, uint64_t kvHead,
                              uint64_t headDim);
  void storeSlot(uint32_t cache, int64_t sequence, int64_t position, uint64_t kvHead,
                 std::span<const float> values);
  // The same on rank `rank`'s memory (tensor parallel: an AllReduce's partial
  // sums); this rank's own when there is one rank.
  std::vector<float> loadFromRank(int64_t rank, uint32_t buffer, uint64_t r, uint64_t begin,
                                  uint64_t count);
  int64_t numRanks() const { return graph.ranks; }
  // Row r's token: the prompt's while it is fed, else the row's previous pick.
  int64_t loadToken(uint64_t r);
  // -1: an inactive row's, which picks nothing: the row keeps its token, for
  // a later launch to continue from.
  void storeToken(uint64_t r, int64_t token);
  const TokenChoice *choice() const { return input.choice; }

  // Checked mode: whether everything the task read is still what it read,
  // i.e. no later step overwrote it meanwhile. Called once the task is done.
  void recheckReads();

  uint64_t elementsOf(uint32_t buffer) const { return graph.buffers[buffer].elements; }
  BufferElement elementOf(uint32_t buffer) const { return graph.buffers[buffer].element; }

  [[noreturn]] void fail(const std::string &problem) const;

private:
  struct Read {
    uint32_t buffer;
    uint64_t offset, count;
    int64_t stamp;
  };

  // From rank `peer`'s memory when peer >= 0 (ranks' entry), else this one's.
  std::vector<float> loadElements(uint32_t buffer, uint64_t offset, uint64_t count,
                                  int64_t expectedStamp, int64_t slot, int64_t peer = -1);
  void storeElements(uint32_t buffer, uint64_t offset, std::span<const float> values,
                     int64_t stamp, int64_t slot);
  std::string where(uint32_t buffer, uint64_t offset, int64_t slot) const;
  // A KV slot's index in its cache, which is also its stamp in checked mode.
  int64_t slotIndex(int64_t sequence, int64_t position) const;
  // Where KV head `kvHead`'s entry at `position` of `sequence` starts.
  uint64_t slotOffset(uint32_t cache, int64_t sequence, int64_t position, uint64_t kvHead,
                      uint64_t headDim) const;
  std::string stepText() const;

  const TaskGraph &graph;
  ExecutorMemory &memory;
  const StepInput &input;
  const std::vector<ExecutorMemory *> *ranks;
  std::vector<Read> reads;
};

} // namespace mk::cpu

#endif
