// A two-layer toy decoder as a hand-made task graph, with random weights and
// a direct computation of the same model with the interpreter's kernels:
// Embed -> Gemv(qkv, norm) -> AttentionChunk/Merge -> Gemv(o,
// residual) -> Gemv(gate|up, norm, silu_mul) -> Gemv(down, residual) -> ...
// -> Gemv(lm_head, norm) -> Argmax, a few tiles per operation. Layer 0 has
// q/k head norms and full rotary; layer 1 qkv biases, partial, interleaved
// rotary and a sliding window of 9 positions (its 3 chunks cover the
// window). Tasks are dealt round-robin to the SMs. Every task's
// reads and writes are written out by hand, apart from the task kinds'
// descriptions, so that they are an oracle for them (TaskKindsTest.cpp, and
// the validator's dataflow checks in TaskGraphValidatorTest.cpp).
#ifndef MKC_TESTS_UNIT_TOYTASKGRAPH_H
#define MKC_TESTS_UNIT_TOYTASKGRAPH_H

#include "core/kernels/Kernels.h"
#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"

#include <cstdint>
#include <vector>

namespace mk::toy {

constexpr int64_t kVocab = 37, kHidden = 16, kHeads = 4, kKvHeads = 2, kHeadDim = 8;
constexpr int64_t kIntermediate = 24, kLayers = 2, kMaxContext = 12, kChunkSize = 4;
constexpr float kEps = 1e-5f;

struct ToyModel {
  TaskGraph graph;
  Schedule schedule;
  WeightTable weights;
};

ToyModel buildToyModel(uint32_t numSms = 4);

// The toy model's lm_head made to write its tiles' picks, which a greedy
// argmax reads (Operation::picks), as the compiler's tiling does.
void addLogitPicks(TaskGraph &graph);

// The toy model's attention merges made inline (Task::runsInline), out of
// the queues, as `mkc compile --inline-merge` makes them.
void inlineMerges(ToyModel &model);

// The toy model's graph made a step of `rows` rows over `sequences`
// sequences (core/taskgraph/StepRows.h): buffers resized, and every task's
// declared reads and writes taken from its kind's footprint, which the
// one-row graph checks against the hand-written ones.
void makeRows(TaskGraph &graph, int64_t rows, int64_t sequences);

// The index of the first task of `kind` whose operation is named `opName`.
uint32_t findTask(const TaskGraph &graph, TaskKind kind, const std::string &opName,
                  uint64_t begin = 0);

// The same model computed op by op with core/kernels/Kernels.
class ToyReference {
public:
  explicit ToyReference(const WeightTable &weights);
  std::vector<float> step(int64_t token);
  // The next step at `position`, the cache slots below it as they are
  // (zeros in a new reference): CpuExecutor::startAt's contract.
  void startAt(int64_t at) { position = at; }

private:
  std::span<const float> weight(const std::string &name) const;

  const WeightTable &weights;
  std::vector<kernels::KVCache> caches;
  int64_t position = 0;
};

} // namespace mk::toy

#endif
