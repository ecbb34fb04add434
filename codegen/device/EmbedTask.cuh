// Embed: rows [begin, end) of each step row's token's row of the table,
// widened from bf16 (runtime/cpu/EmbedTask.cpp). A row's token is its
// prompt's while it is fed, else the one the previous step's argmax left in
// its token slot; an idle row's is 0.
#ifndef MKC_CODEGEN_DEVICE_EMBEDTASK_CUH
#define MKC_CODEGEN_DEVICE_EMBEDTASK_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"
#include "core/protocol/FixedPoint.h"

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

// kRow: the table's row length, the hidden size. One row: its token, then
// a widening copy of its part. A batch's rows at once: every row's token
// first (into shared memory), then (row, element) pairs over the threads, a
// batch of loads in flight before their stores.
template <int kRow, int kStepRows, int kThreads, class AwaitInputs>
__device__ void embedTask(const TaskContext &context, const MkTaskRecord &task,
                          const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
  if constexpr (kStepRows == 1) {
    // Load: the token.
    const long long token = stepToken<1>(context, 0);
    if (token < 0 || static_cast<unsigned long long>(token) >= op.weightRows[0]) {
      if (threadIdx.x == 0)
        raiseError(context, MK_ERROR_TOKEN_OUT_OF_RANGE, token);
      return;
    }
    // Compute and store: a widening copy, and with a seed (a decode step's
    // only) the same values as fixed point into the output an operation
    // adds into (o_proj projecting by head).
    const unsigned short *row = context.weights + op.weights[0] + token * kRow;
    float *out = context.activations + op.output;
    long long *seed = op.seed != MK_NO_OFFSET
                          ? reinterpret_cast<long long *>(context.activations + op.seed)
                          : nullptr;
    for (unsigned index = task.begin + threadIdx.x; index < task.end; index += kThreads) {
      const float value = bf16ToFloat(row[index]);
      out[index] = value;
      if (seed != nullptr)
        seed[index] = floatToFixed(value);
    }
  } else {
    __shared__ long long tokens[kStepRows];
    // Load: the tokens.
    for (int r = threadIdx.x; r < kStepRows; r += kThreads)
      tokens[r] = stepToken<kStepRows>(context, r);
    consumerSync<kThreads>();
    for (int r = 0; r < kStepRows; ++r)
      if (tokens[r] < 0 || static_cast<unsigned long long>(tokens[r]) >= op.weightRows[0]) {
        if (threadIdx.x == 0)
          raiseError(context, MK_ERROR_TOKEN_OUT_OF_RANGE, tokens[r]);
        return;
      }

    // Compute and store: a widening copy of each row's part of its table row.
    // (32-bit: a row's part is at most the hidden size, the rows at most
    // 1024; a 64-bit division is a called subroutine on the GPU.)
    const unsigned span = static_cast<unsigned>(task.end - task.begin);
    const unsigned total = kStepRows * span;
    constexpr int kBatch = 8;
#pragma unroll 1
    for (unsigned base = threadIdx.x; base < total; base += kBatch * kThreads) {
      unsigned short values[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const unsigned item = base + b * kThreads, r = item / span;
        values[b] = item < total ? context.weights[op.weights[0] + tokens[r] * kRow + task.begin +
                                                   item % span]
                                 : 0;
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const unsigned item = base + b * kThreads;
        if (item < total)
          context.activations[op.output + static_cast<unsigned long long>(item / span) * kRow +
                              task.begin + item % span] = bf16ToFloat(values[b]);
      }
    }
  }
}

} // namespace mk::gpu

#endif
