// The persistent kernel's main loop: one CTA per SM, each interpreting its
// SM's queue of the schedule blob, every step of the launch.
//
//   for each step:
//     for each task of this CTA's queue:
//       one thread waits on the task's events while a warp copies its
//       records into shared memory and one thread of a third warp asks for
//       the next task's weights to be prefetched into L2; barrier
//       every thread runs the task's device function (Tasks::run); barrier
//       one thread: fence, release add on the task's trigger
//     one thread waits for this step's argmax, then reads the stop flag and
//     the error word; barrier; every CTA leaves at the same step
//
// When the host asks for a trace (ControlBlock.h), the waiting thread marks
// when each task's wait began and ended and when the task's barrier passed.
//
// Tasks::run is the generated dispatcher (codegen/KernelSource.cpp): the
// task kind and the operation's shape pick one instantiation of the task
// templates, whose sizes are compile-time constants.
#ifndef MKC_CODEGEN_DEVICE_INTERPRETER_CUH
#define MKC_CODEGEN_DEVICE_INTERPRETER_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Events.cuh"
#include "codegen/device/Prefetch.cuh"

namespace mk::gpu {

__device__ inline TaskContext makeContext(const MkKernelArgs &args, float *shared) {
  const unsigned char *blob = reinterpret_cast<const unsigned char *>(args.blob);
  const MkBlobHeader *header = reinterpret_cast<const MkBlobHeader *>(blob);
  TaskContext context;
  context.header = header;
  context.queues = reinterpret_cast<const MkQueue *>(blob + header->queuesOffset);
  context.taskOrder = reinterpret_cast<const unsigned *>(blob + header->taskOrderOffset);
  context.tasks = reinterpret_cast<const MkTaskRecord *>(blob + header->tasksOffset);
  context.waits = reinterpret_cast<const MkWaitRecord *>(blob + header->waitsOffset);
  context.events = reinterpret_cast<const MkEventRecord *>(blob + header->eventsOffset);
  context.operations = reinterpret_cast<const MkOperationRecord *>(blob + header->operationsOffset);
  context.params = reinterpret_cast<const float *>(blob + header->paramsOffset);
  context.weights = reinterpret_cast<const unsigned short *>(args.weights);
  context.activations = reinterpret_cast<float *>(args.activations);
  context.kv = reinterpret_cast<float *>(args.kv);
  context.counters = reinterpret_cast<unsigned *>(args.counters);
  context.control = reinterpret_cast<MkControlBlock *>(args.control);
  context.shared = shared;
  context.step = 0;
  context.position = 0;
  context.taskId = 0xffffffffu;
  return context;
}

// 0 when the blob and the launch are what this kernel was built for, else
// the MkLaunchMismatch.
template <int kThreads>
__device__ inline unsigned launchMismatch(const TaskContext &context, unsigned argmaxTask) {
  const MkBlobHeader *header = context.header;
  if (header->magic != MK_BLOB_MAGIC)
    return MK_MISMATCH_BLOB_MAGIC;
  if (header->version != MK_BLOB_VERSION)
    return MK_MISMATCH_BLOB_VERSION;
  unsigned long long offsets = header->queuesOffset | header->taskOrderOffset |
                               header->tasksOffset | header->waitsOffset |
                               header->eventsOffset | header->operationsOffset |
                               header->paramsOffset;
  if (offsets % 8 != 0)
    return MK_MISMATCH_BLOB_ALIGNMENT;
  if (gridDim.x != header->numSms)
    return MK_MISMATCH_GRID;
  if (blockDim.x != kThreads)
    return MK_MISMATCH_BLOCK;
  const MkControlBlock *control = context.control;
  if (control->firstPosition < 0 || control->steps < 0 ||
      control->firstPosition + control->steps > header->maxContext)
    return MK_MISMATCH_STEPS;
  if (argmaxTask >= header->numTasks)
    return MK_MISMATCH_NO_ARGMAX;
  return 0;
}

// Copies a record into shared memory with the threads of one warp.
template <class Record>
__device__ __forceinline__ void copyRecord(Record &into, const Record &from, int lane) {
  static_assert(sizeof(Record) % 4 == 0, "records are whole words");
  constexpr int kWords = sizeof(Record) / 4;
  for (int i = lane; i < kWords; i += kWarpSize)
    reinterpret_cast<unsigned *>(&into)[i] = reinterpret_cast<const unsigned *>(&from)[i];
}

// Where the times of this step's run of `task` go in the trace, or nullptr
// when the host asked for none: every mark is then one uniform branch of one
// thread, not taken.
__device__ __forceinline__ unsigned long long *
traceTimes(unsigned long long *trace, const TaskContext &context, unsigned task) {
  if (!trace)
    return nullptr;
  unsigned long long run =
      static_cast<unsigned long long>(context.step) * context.header->numTasks + task;
  return trace + run * MK_TRACE_TIMES;
}

__device__ __forceinline__ void markTime(unsigned long long *times, int which) {
  if (times)
    times[which] = globalTimer();
}

template <class Tasks, int kThreads>
__device__ void runMegakernel(const MkKernelArgs &args) {
  static_assert(kThreads % kWarpSize == 0 && kThreads >= 3 * kWarpSize,
                "whole warps: a second one copies records and a third prefetches while the "
                "first waits");
  extern __shared__ float4 dynamicShared[];
  __shared__ MkTaskRecord task;
  __shared__ MkOperationRecord operation;
  __shared__ unsigned argmaxTask;
  __shared__ int launchRefused, taskAbandoned;
  // By step parity: a CTA with an empty queue passes from one step's end
  // to the next with no barrier between, and must not overwrite the flag
  // while its threads still read it.
  __shared__ int stepEnded[2];
  // The waiting thread's trace: the host's buffer and where the current
  // task's times go (both nullptr without a trace). Kept in shared memory,
  // not registers, so that tracing costs the task bodies no register.
  __shared__ unsigned long long *trace, *times;

  TaskContext context = makeContext(args, reinterpret_cast<float *>(dynamicShared));
  MkControlBlock *control = context.control;

  if (threadIdx.x == 0)
    argmaxTask = 0xffffffffu;
  __syncthreads();
  for (unsigned id = threadIdx.x; id < context.header->numTasks; id += kThreads)
    if (context.tasks[id].kind == MK_TASK_ARGMAX)
      argmaxTask = id;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned mismatch = launchMismatch<kThreads>(context, argmaxTask);
    if (mismatch != 0)
      raiseError(context, MK_ERROR_LAUNCH_MISMATCH, mismatch);
    launchRefused = mismatch != 0;
  }
  __syncthreads();
  if (launchRefused)
    return;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0)
      control->startNs = globalTimer();
    trace = reinterpret_cast<unsigned long long *>(control->trace);
  }

  const MkQueue queue = context.queues[blockIdx.x];
  const unsigned argmaxEvent = context.tasks[argmaxTask].trigger;
  const unsigned argmaxTriggers = context.events[argmaxEvent].triggerCount;
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const bool prefetching = Tasks::kPrefetchBytes > 0 && warp == 2 && lane == 0;
  if (prefetching && queue.count > 0)
    prefetchTaskWeights(context, context.tasks[context.taskOrder[queue.first]],
                        Tasks::kPrefetchBytes);

  for (long long step = 0; step < control->steps; ++step) {
    context.step = step;
    context.position = control->firstPosition + step;
    for (unsigned k = 0; k < queue.count; ++k) {
      unsigned id = context.taskOrder[queue.first + k];
      const MkTaskRecord &record = context.tasks[id];
      if (threadIdx.x == 0) {
        times = traceTimes(trace, context, id);
        markTime(times, MK_TRACE_WAIT);
        taskAbandoned = !waitForTask(context, record);
        markTime(times, MK_TRACE_START);
      } else if (warp == 1) {
        copyRecord(task, record, lane);
        copyRecord(operation, context.operations[record.op], lane);
      } else if (prefetching && queue.count > 1) {
        // One task ahead; the last task's next is the first of the next step.
        unsigned next = context.taskOrder[queue.first + (k + 1 < queue.count ? k + 1 : 0)];
        prefetchTaskWeights(context, context.tasks[next], Tasks::kPrefetchBytes);
      }
      __syncthreads();
      if (taskAbandoned)
        return;
      const unsigned triggerEvent = task.trigger;
      context.taskId = id;
      Tasks::run(context, task, operation);
      __syncthreads();
      if (threadIdx.x == 0) {
        markTime(times, MK_TRACE_END);
        trigger(context, triggerEvent);
      }
    }

    context.taskId = 0xffffffffu; // a timeout here is no task's
    if (threadIdx.x == 0) {
      bool argmaxDone =
          waitForCount(context, argmaxEvent, argmaxTriggers * static_cast<unsigned>(step + 1));
      stepEnded[step & 1] = !argmaxDone || loadRelaxed(&control->stop) != 0 ||
                            loadRelaxed(&control->error) != MK_ERROR_NONE;
    }
    __syncthreads();
    if (stepEnded[step & 1])
      return;
  }
}

} // namespace mk::gpu

#endif
