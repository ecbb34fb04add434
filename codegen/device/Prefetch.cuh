// Weight prefetch into L2: as a task ends, the weights of the CTA's next
// task are already known, since weights do not change during a launch and
// every SM's queue is fixed. One thread asks the copy engine to bring the
// first kPrefetchBytes of them into L2 (cp.async.bulk.prefetch: no
// registers, no shared memory, no completion to wait for), so that HBM
// keeps streaming through the closing barrier, the release and the next
// task's wait (`--prefetch-bytes`, off by default). And a HeadProjection
// tile's weights a task ahead, while the SM's attention chunk runs
// (prefetchHeadProjectionTile).
#ifndef MKC_CODEGEN_DEVICE_PREFETCH_CUH
#define MKC_CODEGEN_DEVICE_PREFETCH_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/AttentionLayout.h"

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

// At most this many bytes of a tile are asked for ahead: the 1B shape's
// tiles of 64 KiB, asked for as the chunks start, made the chunks 1.1 us
// longer and their tiles no shorter (bench/NOTES.md).
constexpr unsigned kMostTileBytesAhead = 32 * 1024;

// By every thread of the CTA as an attention chunk starts, when its SM's
// next task `entry` is a HeadProjection tile of at most
// kMostTileBytesAhead: the tile's rows (its head's columns of them) into
// L2, a row a thread. The chunk streams few bytes, and a tile waits on its
// head's chunks, which end about when its own SM's does, so that the
// tile's first weights, asked for only as it starts, come from HBM while
// nothing else is left to do. A prefetch is an instruction that holds no
// register and waits for nothing (the copy engine's bulk prefetches, one a
// row, held the SM's loads: bench/NOTES.md); a row that crosses more than
// two lines (heads of more than 128 dimensions, or of 128 not starting on
// a line) is asked for in part. Rows past the CTA's threads are left out.
template <int kThreads>
__device__ inline void prefetchHeadProjectionTile(const TaskContext &context,
                                                  const MkQueueEntry &entry) {
  if (entry.task.kind != MK_TASK_HEAD_PROJECTION)
    return;
  const unsigned head = headTileHead<unsigned>(entry.task.begin);
  const unsigned first = headTileRow<unsigned>(entry.task.begin);
  const unsigned rows = headTileRow<unsigned>(entry.task.end) - first;
  const unsigned long long rowBytes = entry.operation.inputLength * sizeof(unsigned short);
  const unsigned headBytes = static_cast<unsigned>(entry.operation.headDim) * sizeof(unsigned short);
  if (rows * headBytes > kMostTileBytesAhead)
    return;
  const char *tile = reinterpret_cast<const char *>(context.weights + entry.operation.weights[0]) +
                     first * rowBytes + head * headBytes;
  // The lines of a row's first and last bytes.
  const unsigned r = threadIdx.x % kThreads;
  if (r < rows) {
    const char *start = tile + r * rowBytes;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(start) : "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(start + headBytes - 1) : "memory");
  }
}

} // namespace mk::gpu

#endif
