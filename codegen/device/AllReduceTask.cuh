// AllReduce (core/taskgraph/kinds/AllReduceKind.cpp): rows [begin, end) of
// out = residual + (((in_0 + in_1) + in_2) + ...), in_r rank r's partial
// sums of a row-parallel gemv, read from its activation arena, added in rank
// order on every rank: every rank holds the same bits, and they are the CPU
// reference's (runtime/cpu/AllReduceTask.cpp). Its allRanks waits acquired
// every rank's tiles of those rows before it starts.
#ifndef MKC_CODEGEN_DEVICE_ALLREDUCETASK_CUH
#define MKC_CODEGEN_DEVICE_ALLREDUCETASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Ranks.cuh"

#if MK_RANKS > 1 // the dispatcher names it in a kernel of several ranks only

namespace mk::gpu {

// kLength: the output's row length (the hidden size); kStepRows: the
// step's rows, each summed alone.
template <int kLength, int kStepRows, int kThreads, class AwaitInputs>
__device__ void allReduceTask(const TaskContext &context, const MkTaskRecord &task,
                              const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
  const RankPeers &peers = rankPeers;
  const unsigned rows = task.end - task.begin;
  // (row, element) pairs over the threads; each loads every rank's part
  // before it adds, so that the ranks' loads are in flight together.
  for (unsigned pair = threadIdx.x; pair < kStepRows * rows; pair += kThreads) {
    const unsigned r = pair / rows, index = task.begin + pair % rows;
    const unsigned long long in = op.input + static_cast<unsigned long long>(r) * op.inputLength;
    const unsigned long long at = static_cast<unsigned long long>(r) * kLength + index;
    // Load: every rank's partial sum and the residual.
    float parts[kRanks];
#pragma unroll
    for (int rank = 0; rank < kRanks; ++rank)
      parts[rank] = loadFromRank(peers.activations[rank] + in + index);
    const float residual = context.activations[op.residual + at];
    // Compute: in rank order, as the CPU does; then the residual.
    float sum = parts[0];
#pragma unroll
    for (int rank = 1; rank < kRanks; ++rank)
      sum = __fadd_rn(sum, parts[rank]);
    // Store.
    context.activations[op.output + at] = __fadd_rn(residual, sum);
  }
}

} // namespace mk::gpu

#endif // MK_RANKS > 1

#endif
