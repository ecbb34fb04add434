// Embed: rows [begin, end) of the token's row of the table, widened from
// bf16 (runtime/cpu/EmbedTask.cpp). The token is the prompt's while it is
// fed, else the one the previous step's argmax left in the token slot.
#ifndef MKC_CODEGEN_DEVICE_EMBEDTASK_CUH
#define MKC_CODEGEN_DEVICE_EMBEDTASK_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

// kRow: the table's row length, the hidden size.
template <int kRow, int kThreads, class AwaitInputs>
__device__ void embedTask(const TaskContext &context, const MkTaskRecord &task,
                          const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
  // Load: the token.
  const MkControlBlock *control = context.control;
  long long token =
      context.step < control->forcedSteps
          ? reinterpret_cast<const long long *>(control->tokens)[context.step]
          : *reinterpret_cast<const long long *>(context.activations + context.header->tokenSlot);
  if (token < 0 || static_cast<unsigned long long>(token) >= op.weightRows[0]) {
    if (threadIdx.x == 0)
      raiseError(context, MK_ERROR_TOKEN_OUT_OF_RANGE, token);
    return;
  }
  const unsigned short *row = context.weights + op.weights[0] + token * kRow;

  // Compute and store: a widening copy.
  float *out = context.activations + op.output;
  for (unsigned index = task.begin + threadIdx.x; index < task.end; index += kThreads)
    out[index] = bf16ToFloat(row[index]);
}

} // namespace mk::gpu

#endif
