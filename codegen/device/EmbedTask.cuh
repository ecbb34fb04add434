// Embed: rows [begin, end) of each step row's token's row of the table,
// widened from bf16 (runtime/cpu/EmbedTask.cpp). A row's token is its
// prompt's while it is fed, else the one the previous step's argmax left in
// its token slot; an idle row's is 0.
#ifndef MKC_CODEGEN_DEVICE_EMBEDTASK_CUH
#define MKC_CODEGEN_DEVICE_EMBEDTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"

namespace mk::gpu {

// The token row r of the step embeds.
template <int kStepRows>
__device__ __forceinline__ long long stepToken(const TaskContext &context, int r) {
  const long long *slots =
      reinterpret_cast<const long long *>(context.activations + context.header->tokenSlot);
  if constexpr (kStepRows == 1) {
    const MkControlBlock *control = context.control;
    return context.step < control->forcedSteps
               ? reinterpret_cast<const long long *>(control->tokens)[context.step]
               : slots[0];
  } else {
    const MkRowPlan &plan = rowPlan(context, r);
    if (!stepRow<kStepRows>(context, r).active)
      return 0;
    return context.step < plan.forcedSteps
               ? reinterpret_cast<const long long *>(plan.tokens)[context.step]
               : slots[r];
  }
}

// kRow: the table's row length, the hidden size.
template <int kRow, int kStepRows, int kThreads, class AwaitInputs>
__device__ void embedTask(const TaskContext &context, const MkTaskRecord &task,
                          const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
#pragma unroll 1
  for (int r = 0; r < kStepRows; ++r) {
    // Load: the token.
    long long token = stepToken<kStepRows>(context, r);
    if (token < 0 || static_cast<unsigned long long>(token) >= op.weightRows[0]) {
      if (threadIdx.x == 0)
        raiseError(context, MK_ERROR_TOKEN_OUT_OF_RANGE, token);
      return;
    }
    const unsigned short *row = context.weights + op.weights[0] + token * kRow;

    // Compute and store: a widening copy.
    float *out = context.activations + op.output + static_cast<unsigned long long>(r) * kRow;
    for (unsigned index = task.begin + threadIdx.x; index < task.end; index += kThreads)
      out[index] = bf16ToFloat(row[index]);
  }
}

} // namespace mk::gpu

#endif
