// Runs a tensor-parallel model on the CPU: every rank's graph (compiled by
// `mkc compile --tensor-parallel N`, compiler/taskgraph/ShardOperations.h)
// in one process, each rank's emulated SMs on threads of their own (or all
// interleaved on one), each rank with its own memory and event counters,
// the shared memory of the process standing in for the transport: an
// AllReduce reads the other ranks' partial sums where they wrote them, and
// an allRanks wait reads every rank's counter. It is how CI checks sharded
// schedules, and the reference a multi-GPU run is compared against.
//
// Nothing is trusted: every rank's graph and schedule is validated, and the
// ranks must be one model's: the same tasks, events, buffers and schedule,
// rank r being rank r of N. Every rank computes the whole logits; a rank
// whose token differs from rank 0's fails the launch.
#ifndef MKC_RUNTIME_CPU_TENSORPARALLELEXECUTOR_H
#define MKC_RUNTIME_CPU_TENSORPARALLELEXECUTOR_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"
#include "runtime/cpu/CpuExecutor.h"

#include <memory>
#include <vector>

namespace mk {

class TensorParallelExecutor {
public:
  // `weights` (every rank's slices) must outlive the executor.
  TensorParallelExecutor(const std::vector<ScheduledGraph> &ranks, const WeightTable &weights,
                         CpuExecutorOptions options = {});
  ~TensorParallelExecutor();
  TensorParallelExecutor(const TensorParallelExecutor &) = delete;
  TensorParallelExecutor &operator=(const TensorParallelExecutor &) = delete;

  // Teacher forcing: one step with `token` at the next position; rank 0's logits.
  std::vector<float> step(int64_t token);
  // Feeds `prompt` (not empty) and generates up to `newTokens` tokens in one
  // launch of every rank, as CpuExecutor::generate does.
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                                const GenerateOptions &options = {});
  int64_t position() const;
  // Of the last launch, as CpuExecutor's.
  GenerateStop lastStop() const;
  std::span<const double> stepMilliseconds() const;

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace mk

#endif
