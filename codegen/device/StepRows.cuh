// The rows of a step as the device functions see them
// (core/taskgraph/StepRows.h, docs/m-token-steps.md). A kernel of one row a
// step (decode, kStepRows 1) takes its position from the control block, as
// it always did; a kernel of several rows (a batch: row r is sequence r)
// takes each row's from the host's MkRowPlan (runtime/format/ControlBlock.h),
// whose activeUntil the argmax lowers when the row picks an EOS.
//
// Row r of a buffer an operation reads or writes per row starts r rows of
// that buffer in, a row being as long as the operation says (its input,
// its output, its partials); the blob builder refuses a graph whose
// buffers are otherwise (runtime/format/ScheduleBlobBuilder.cpp).
#ifndef MKC_CODEGEN_DEVICE_STEPROWS_CUH
#define MKC_CODEGEN_DEVICE_STEPROWS_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

struct StepRow {
  long long sequence, position;
  bool active; // an idle row is fed token 0, attends to nothing, writes no KV slot, picks nothing
};

__device__ __forceinline__ const MkRowPlan &rowPlan(const TaskContext &context, int r) {
  return reinterpret_cast<const MkRowPlan *>(context.control->rowPlans)[r];
}

template <int kStepRows>
__device__ __forceinline__ StepRow stepRow(const TaskContext &context, int r) {
  if constexpr (kStepRows == 1) {
    return {0, context.position, true};
  } else {
    const MkRowPlan &plan = rowPlan(context, r);
    return {plan.sequence, plan.firstPosition + context.step * plan.positionsPerStep,
            context.step < plan.activeUntil};
  }
}

// The elements of one sequence's slots of a KV cache: [kvHeads][maxContext][headDim].
__device__ __forceinline__ unsigned long long sequenceSlots(const TaskContext &context,
                                                            const MkOperationRecord &op) {
  return static_cast<unsigned long long>(context.header->maxContext) * op.numKvHeads *
         op.headDim;
}

// What a task that runs its part for each row in turn hands row r's part
// for its wait: the task's own for the first row; for a later one a barrier
// of the consumers (the step's inputs were awaited for the first).
template <class AwaitInputs, int kThreads>
struct RowInputs {
  const AwaitInputs &awaitInputs;
  int row;
  __device__ __forceinline__ bool operator()() const {
    if (row == 0)
      return awaitInputs();
    consumerSync<kThreads>();
    return true;
  }
};

} // namespace mk::gpu

#endif
