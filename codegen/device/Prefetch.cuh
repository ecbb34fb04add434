// Weight prefetch into L2: as a task ends, the weights of the CTA's next
// task are already known, since weights do not change during a launch and
// every SM's queue is fixed. One thread asks the copy engine to bring the
// first kPrefetchBytes of them into L2 (cp.async.bulk.prefetch: no
// registers, no shared memory, no completion to wait for), so that HBM
// keeps streaming through the closing barrier, the release and the next
// task's wait.
#ifndef MKC_CODEGEN_DEVICE_PREFETCH_CUH
#define MKC_CODEGEN_DEVICE_PREFETCH_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

// One bulk prefetch covers at most this much: a bound on what one
// instruction asks of the copy engine.
constexpr unsigned kPrefetchPiece = 32 * 1024;

// `bytes` from `address` into L2; both multiples of 16.
__device__ __forceinline__ void prefetchToL2(const void *address, unsigned long long bytes) {
#if __CUDA_ARCH__ >= 900
  for (unsigned long long done = 0; done < bytes; done += kPrefetchPiece) {
    unsigned piece = static_cast<unsigned>(min(bytes - done, (unsigned long long)kPrefetchPiece));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(
                     reinterpret_cast<const char *>(address) + done),
                 "r"(piece)
                 : "memory");
  }
#endif
}

// Rows [begin, end) of a gemv's stacked weights, at most `budget` bytes of
// them from the first; returns the bytes asked for.
__device__ inline unsigned long long prefetchStackedRows(const TaskContext &context,
                                                         const MkOperationRecord &op,
                                                         unsigned long long begin,
                                                         unsigned long long end,
                                                         unsigned long long budget) {
  const unsigned long long rowBytes = op.inputLength * sizeof(unsigned short);
  unsigned long long first = 0, asked = 0;
  for (int i = 0; i < op.numWeights && begin < end && asked < budget; ++i) {
    unsigned long long last = first + op.weightRows[i];
    if (begin < last) {
      unsigned long long rows = min(end, last) - begin;
      unsigned long long bytes = min(rows * rowBytes, budget - asked) / 16 * 16;
      prefetchToL2(context.weights + op.weights[i] + (begin - first) * op.inputLength, bytes);
      asked += bytes;
      begin += rows;
    }
    first = last;
  }
  return asked;
}

// The first `budget` bytes of what `task` will stream, in the order it
// streams them: a SiluMul tile reads gate row j with up row j, so each half
// of the budget goes to one of them. Only gemv tasks stream weights.
__device__ inline void prefetchTaskWeights(const TaskContext &context, const MkTaskRecord &task,
                                           const MkOperationRecord &op,
                                           unsigned long long budget) {
  if (task.kind != MK_TASK_GEMV)
    return;
  // Rows that are not whole 16-byte units cannot be bulk-copied.
  if ((op.inputLength * sizeof(unsigned short)) % 16 != 0)
    return;
  if (MK_EPILOGUE_GATED(op.epilogue)) {
    prefetchStackedRows(context, op, task.begin, task.end, budget / 2);
    prefetchStackedRows(context, op, op.outputLength + task.begin, op.outputLength + task.end,
                        budget / 2);
  } else {
    prefetchStackedRows(context, op, task.begin, task.end, budget);
  }
}

} // namespace mk::gpu

#endif
