// Weight staging: gemv weights copied into shared memory ahead of their task.
//
// Weights never depend on activations, so the first rows of an SM's next
// gemv task can be on their way while the gemv before it runs. One thread
// (the stager, Interpreter.cuh) issues bulk copies (cp.async.bulk, the copy
// engine: no registers, no loads in flight to keep) into one of two stage
// buffers at the top of a gemv task, for the gemv after it, completing on
// that buffer's mbarrier; the next gemv then reads those rows from shared
// memory and streams the rest from global memory as before, so its first
// bytes cost no memory latency and HBM keeps streaming across the hop
// between the two. It stages only while a gemv streams: issued ahead of
// attention, the copies would queue in front of that phase's latency-bound
// loads (measured: +3 us per layer on the Llama-3.2-1B shape).
//
// Off by default (mkc compile --stage-bytes): on the H200 the 1B shape ran
// 3% slower with it, since the stager is one of the CTA's threads and its
// record loads and copies delay the barrier before every task. A producer
// warp outside the consumers' barriers would take it off that path.
//
// A buffer is tagged with the task whose rows it holds. Weights are the same
// every step, so the tag stays valid until the buffer is refilled. The
// stager only fills the buffer the current task does not read, and only for
// the next task of the queue, which has not run since: a buffer is never
// refilled while its copy is in flight or its rows are being read.
#ifndef MKC_CODEGEN_DEVICE_WEIGHTSTAGING_CUH
#define MKC_CODEGEN_DEVICE_WEIGHTSTAGING_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

constexpr int kStageBuffers = 2;
constexpr unsigned kNoTask = 0xffffffffu;
// One bulk copy moves at most this much: a bound on what one instruction
// asks of the copy engine.
constexpr unsigned kStagePiece = 32 * 1024;

// What the stager and the gemvs share, in static shared memory.
struct WeightStages {
  unsigned long long full[kStageBuffers]; // mbarriers: a buffer's copies completed
  unsigned task[kStageBuffers];           // whose rows it holds (kNoTask: none)
  unsigned rows[kStageBuffers];           // how many of them, per stacked part
  unsigned fills[kStageBuffers];          // copies issued so far: its mbarrier's phases
};

__device__ __forceinline__ unsigned sharedAddress(const void *pointer) {
  unsigned long long address;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(address) : "l"(pointer));
  return static_cast<unsigned>(address);
}

__device__ __forceinline__ void initStages(WeightStages &stages) {
  for (int b = 0; b < kStageBuffers; ++b) {
    stages.task[b] = kNoTask;
    stages.rows[b] = 0;
    stages.fills[b] = 0;
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(&stages.full[b]))
                 : "memory");
#endif
  }
#if __CUDA_ARCH__ >= 900
  // The copy engine completes on these barriers: their initialisation must
  // be visible to it.
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// Whether phase `parity` of `barrier` has completed (non-blocking).
__device__ __forceinline__ bool phaseDone(unsigned long long *barrier, unsigned parity) {
  unsigned done = 1;
#if __CUDA_ARCH__ >= 900
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}"
               : "=r"(done)
               : "r"(sharedAddress(barrier)), "r"(parity)
               : "memory");
#endif
  return done != 0;
}

// Waits until the staged rows have landed. The copies cannot wait on
// anything, so this ends unless the GPU faulted; still, it is bounded like
// every wait of the kernel, and a timeout is reported, not hung on.
__device__ inline void waitStaged(const TaskContext &context, const StagedRows &staged) {
  if (staged.count == 0 || phaseDone(staged.full, staged.parity))
    return;
  unsigned long long started = globalTimer();
  while (!phaseDone(staged.full, staged.parity)) {
    if (globalTimer() - started > context.control->waitTimeoutNs) {
      raiseError(context, MK_ERROR_WAIT_TIMEOUT, -1);
      return;
    }
  }
}

// Bytes of `bytes` from global `from` into shared `into`, completing on
// `barrier` (whose expected bytes the caller has raised).
__device__ __forceinline__ void bulkCopy(void *into, const void *from, unsigned long long bytes,
                                         unsigned long long *barrier) {
#if __CUDA_ARCH__ >= 900
  for (unsigned long long done = 0; done < bytes; done += kStagePiece) {
    unsigned piece = static_cast<unsigned>(min(bytes - done, (unsigned long long)kStagePiece));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];" ::"r"(sharedAddress(static_cast<char *>(into) + done)),
                 "l"(static_cast<const char *>(from) + done), "r"(piece),
                 "r"(sharedAddress(barrier))
                 : "memory");
  }
#endif
}

// Rows of the gemv `task` one buffer of `bufferBytes` holds: the same
// number from each stacked part (gate and up for SiluMul). 0 when its rows
// are not whole 16-byte units, which bulk copies need.
__device__ __forceinline__ unsigned stageableRows(const MkTaskRecord &task,
                                                  const MkOperationRecord &op,
                                                  unsigned long long bufferBytes) {
  const unsigned long long rowBytes = op.inputLength * sizeof(unsigned short);
  if (rowBytes % 16 != 0 || rowBytes == 0)
    return 0;
  unsigned long long parts = op.epilogue == MK_EPILOGUE_SILU_MUL ? 2 : 1;
  return static_cast<unsigned>(
      min(static_cast<unsigned long long>(task.end - task.begin), bufferBytes / (rowBytes * parts)));
}

// Stacked rows [first, first + count) of `op` into `into`, row after row.
__device__ inline unsigned long long copyStackedRows(const TaskContext &context,
                                                     const MkOperationRecord &op,
                                                     unsigned long long first, unsigned count,
                                                     unsigned short *into,
                                                     unsigned long long *barrier) {
  const unsigned long long rowBytes = op.inputLength * sizeof(unsigned short);
  unsigned long long begin = first, end = first + count, start = 0, copied = 0;
  for (int i = 0; i < op.numWeights && begin < end; ++i) {
    unsigned long long last = start + op.weightRows[i];
    if (begin < last) {
      unsigned long long rows = min(end, last) - begin;
      bulkCopy(into + (begin - first) * op.inputLength,
               context.weights + op.weights[i] + (begin - start) * op.inputLength,
               rows * rowBytes, barrier);
      copied += rows * rowBytes;
      begin += rows;
    }
    start = last;
  }
  return copied;
}

// Stager: the first rows of gemv `id` into buffer `b`. One thread.
__device__ inline void stageTask(const TaskContext &context, WeightStages &stages,
                                 unsigned short *buffer, unsigned long long bufferBytes, int b,
                                 unsigned id) {
  const MkTaskRecord &task = context.tasks[id];
  const MkOperationRecord &op = context.operations[task.op];
  unsigned rows = stageableRows(task, op, bufferBytes);
  stages.task[b] = id;
  stages.rows[b] = rows;
  if (rows == 0)
    return;
  const bool gated = op.epilogue == MK_EPILOGUE_SILU_MUL;
  const unsigned long long bytes = (gated ? 2ull : 1ull) * rows * op.inputLength * 2;
#if __CUDA_ARCH__ >= 900
  // The buffer's last readers were generic-proxy loads, ordered before this
  // by the CTA barrier; the copy engine writes through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   sharedAddress(&stages.full[b])),
               "r"(static_cast<unsigned>(bytes))
               : "memory");
#endif
  ++stages.fills[b];
  copyStackedRows(context, op, task.begin, rows, buffer, &stages.full[b]);
  if (gated)
    copyStackedRows(context, op, op.outputLength + task.begin, rows,
                    buffer + static_cast<unsigned long long>(rows) * op.inputLength,
                    &stages.full[b]);
}

// The buffer holding task `id`'s rows, or -1.
__device__ __forceinline__ int stagedBuffer(const WeightStages &stages, unsigned id) {
  for (int b = 0; b < kStageBuffers; ++b)
    if (stages.task[b] == id)
      return b;
  return -1;
}

__device__ __forceinline__ StagedRows stagedRows(WeightStages &stages, unsigned short *buffers,
                                                 unsigned long long bufferBytes, unsigned id) {
  int b = stagedBuffer(stages, id);
  if (b < 0 || stages.rows[b] == 0)
    return {nullptr, 0, nullptr, 0};
  return {buffers + b * (bufferBytes / sizeof(unsigned short)), stages.rows[b], &stages.full[b],
          (stages.fills[b] - 1) & 1};
}

// Before the CTA leaves: every copy it issued has landed, so that none
// writes into shared memory the SM has handed to another CTA. One thread.
__device__ inline void drainStages(WeightStages &stages) {
  for (int b = 0; b < kStageBuffers; ++b)
    if (stages.fills[b] > 0)
      while (!phaseDone(&stages.full[b], (stages.fills[b] - 1) & 1)) {
      }
}

} // namespace mk::gpu

#endif
