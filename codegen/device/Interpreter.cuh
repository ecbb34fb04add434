// The persistent kernel's main loop: one CTA per SM, each interpreting its
// SM's queue of the schedule blob, every step of the launch. Its threads
// play named roles, each written in one place below:
//
//   controller  thread 0. Before a task: waits on its events (Events.cuh)
//               and marks the trace. After it: triggers the task's event,
//               a release that publishes every consumer's stores (the
//               storer's part). At a step's end: waits for the argmax and
//               decides whether the launch goes on.
//   loader      warp 1: copies the task's records into shared memory while
//               the controller waits.
//   stager      lane 0 of warp 2: while the controller waits, has the copy
//               engine bring the first rows of the next task's weights into
//               a stage buffer in shared memory (WeightStaging.cuh), or,
//               where the kernel has no stage buffers, into L2 (Prefetch.cuh).
//   consumers   every thread: the task's device function (Tasks::run, the
//               generated dispatcher over the kernel variants).
//
//   for each step:
//     for each task of this CTA's queue:
//       controller waits | loader copies records | stager stages; barrier
//       consumers run the task; barrier
//       controller triggers the task's event
//     controller waits for this step's argmax, reads stop and error; barrier
//     every CTA leaves at the same step
#ifndef MKC_CODEGEN_DEVICE_INTERPRETER_CUH
#define MKC_CODEGEN_DEVICE_INTERPRETER_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Events.cuh"
#include "codegen/device/Prefetch.cuh"
#include "codegen/device/WeightStaging.cuh"

namespace mk::gpu {

// Which threads play which role, and what the roles need of a CTA.
template <int kThreads>
struct Roles {
  static constexpr int kLoaderWarp = 1, kStagerWarp = 2, kRoleWarps = 3;
  static_assert(kThreads % kWarpSize == 0 && kThreads <= 1024, "whole warps, one CTA");
  static_assert(kThreads / kWarpSize >= kRoleWarps,
                "the controller, the loader and the stager each need a warp of their own");
  // __launch_bounds__(kThreads, 1): one CTA per SM shares its 64K registers.
  static_assert(65536 / kThreads >= 64, "at least 64 registers per thread for the task bodies");

  __device__ static bool controller() { return threadIdx.x == 0; }
  __device__ static bool loader() { return threadIdx.x / kWarpSize == kLoaderWarp; }
  __device__ static bool stager() { return threadIdx.x == kStagerWarp * kWarpSize; }
};

// What the roles share in static shared memory.
struct InterpreterState {
  MkTaskRecord task; // the loader's copies of the current task's records
  MkOperationRecord operation;
  WeightStages stages;
  unsigned argmaxTask;
  int launchRefused, taskAbandoned;
  // By step parity: a CTA with an empty queue passes from one step's end to
  // the next with no barrier between, and must not overwrite the flag while
  // its threads still read it.
  int stepEnded[2];
  // The controller's trace: the host's buffer and where the current task's
  // times go (both nullptr without a trace). Here rather than in registers,
  // so that tracing costs the task bodies no register.
  unsigned long long *trace, *times;
};

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
  context.staged = {nullptr, 0, nullptr, 0};
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

// Where this step's run of `task` goes in the trace, or nullptr when the
// host asked for none: every mark is then one untaken branch.
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

// ---------------------------------------------------------------------------
// The roles' work, one function each.
// ---------------------------------------------------------------------------

// Controller, before a task: its waits, marked in the trace.
__device__ __forceinline__ void controllerWait(InterpreterState &state, const TaskContext &context,
                                               unsigned id, const MkTaskRecord &record) {
  state.times = traceTimes(state.trace, context, id);
  markTime(state.times, MK_TRACE_WAIT);
  state.taskAbandoned = !waitForTask(context, record);
  markTime(state.times, MK_TRACE_START);
}

// Controller, after every consumer passed the task's closing barrier. The
// release is cumulative: the consumers' stores, ordered before it by the
// barrier, are visible to whoever acquires the count, so no separate fence
// is needed (a full fence here would sit on the critical path).
__device__ __forceinline__ void controllerRelease(InterpreterState &state,
                                                  const TaskContext &context, unsigned event) {
  markTime(state.times, MK_TRACE_END);
  trigger(context, event);
}

// Controller, at a step's end: whether the launch stops after this step
// (an EOS, an error, or a wait that timed out).
__device__ __forceinline__ bool controllerStepEnds(const TaskContext &context,
                                                   unsigned argmaxEvent, unsigned argmaxTriggers,
                                                   long long step) {
  unsigned target = static_cast<unsigned>(mk_event_threshold(argmaxTriggers, step, 0));
  bool argmaxDone = waitForCount(context, argmaxEvent, target);
  return !argmaxDone || loadRelaxed(&context.control->stop) != 0 ||
         loadRelaxed(&context.control->error) != MK_ERROR_NONE;
}

// Loader: a record into shared memory, with the threads of one warp.
template <class Record>
__device__ __forceinline__ void copyRecord(Record &into, const Record &from, int lane) {
  static_assert(sizeof(Record) % 4 == 0, "records are whole words");
  constexpr int kWords = sizeof(Record) / 4;
  for (int i = lane; i < kWords; i += kWarpSize)
    reinterpret_cast<unsigned *>(&into)[i] = reinterpret_cast<const unsigned *>(&from)[i];
}

__device__ __forceinline__ void loaderCopy(InterpreterState &state, const TaskContext &context,
                                           const MkTaskRecord &record) {
  int lane = threadIdx.x % kWarpSize;
  copyRecord(state.task, record, lane);
  copyRecord(state.operation, context.operations[record.op], lane);
}

// The stage buffers, after the task bodies' shared memory.
template <class Tasks>
__device__ __forceinline__ unsigned short *stageBuffers(const TaskContext &context) {
  return reinterpret_cast<unsigned short *>(reinterpret_cast<char *>(context.shared) +
                                            Tasks::kTaskSharedBytes);
}

// Stager: the weights of the task after the k-th of the queue (the last
// task's next is the first of the next step), into the stage buffer the
// k-th task does not read, or without stage buffers into L2.
template <class Tasks>
__device__ __forceinline__ void stageNext(InterpreterState &state, const TaskContext &context,
                                          const MkQueue &queue, unsigned k, unsigned current,
                                          unsigned currentKind) {
  unsigned next = context.taskOrder[queue.first + (k + 1 < queue.count ? k + 1 : 0)];
  const MkTaskRecord &record = context.tasks[next];
  if constexpr (Tasks::kStageBytes > 0) {
    // Only while a gemv streams: the copies would otherwise queue ahead of
    // the latency-bound loads of attention and of the hops between phases.
    if (record.kind != MK_TASK_GEMV || currentKind != MK_TASK_GEMV || next == current ||
        stagedBuffer(state.stages, next) >= 0)
      return;
    int b = stagedBuffer(state.stages, current) == 0 ? 1 : 0;
    stageTask(context, state.stages, stageBuffers<Tasks>(context) + b * (Tasks::kStageBytes / 2),
              Tasks::kStageBytes, b, next);
  } else {
    prefetchTaskWeights(context, record, Tasks::kPrefetchBytes);
  }
}

// What the running task finds staged, for its body.
template <class Tasks>
__device__ __forceinline__ StagedRows stagedFor(InterpreterState &state,
                                                const TaskContext &context, unsigned id) {
  if constexpr (Tasks::kStageBytes > 0)
    return stagedRows(state.stages, stageBuffers<Tasks>(context), Tasks::kStageBytes, id);
  else
    return {nullptr, 0, nullptr, 0};
}

// The CTA's way out, taken by every thread: the stager first waits for its
// copies in flight.
template <class Tasks>
__device__ __forceinline__ void leave(InterpreterState &state, bool stager) {
  if constexpr (Tasks::kStageBytes > 0)
    if (stager)
      drainStages(state.stages);
}

// ---------------------------------------------------------------------------
// The loop.
// ---------------------------------------------------------------------------

template <class Tasks, int kThreads>
__device__ void runMegakernel(const MkKernelArgs &args) {
  using Role = Roles<kThreads>;
  static_assert(sizeof(InterpreterState) + kThreads / kWarpSize * 16 <= Tasks::kStaticSharedReserve,
                "the interpreter's state and the reductions' scratch fit the reserve");
  extern __shared__ float4 dynamicShared[];
  __shared__ InterpreterState state;

  TaskContext context = makeContext(args, reinterpret_cast<float *>(dynamicShared));
  MkControlBlock *control = context.control;

  if (Role::controller()) {
    state.argmaxTask = 0xffffffffu;
    initStages(state.stages);
  }
  __syncthreads();
  for (unsigned id = threadIdx.x; id < context.header->numTasks; id += kThreads)
    if (context.tasks[id].kind == MK_TASK_ARGMAX)
      state.argmaxTask = id;
  __syncthreads();
  if (Role::controller()) {
    unsigned mismatch = launchMismatch<kThreads>(context, state.argmaxTask);
    if (mismatch != 0)
      raiseError(context, MK_ERROR_LAUNCH_MISMATCH, mismatch);
    state.launchRefused = mismatch != 0;
  }
  __syncthreads();
  if (state.launchRefused)
    return;
  if (Role::controller()) {
    if (blockIdx.x == 0)
      control->startNs = globalTimer();
    state.trace = reinterpret_cast<unsigned long long *>(control->trace);
  }

  const MkQueue queue = context.queues[blockIdx.x];
  const unsigned argmaxEvent = context.tasks[state.argmaxTask].trigger;
  const unsigned argmaxTriggers = context.events[argmaxEvent].triggerCount;
  const bool staging =
      (Tasks::kStageBytes > 0 || Tasks::kPrefetchBytes > 0) && Role::stager() && queue.count > 0;
  if (staging) // the first task's weights: stageNext looks one task ahead
    stageNext<Tasks>(state, context, queue, queue.count - 1, kNoTask, MK_TASK_GEMV);

  for (long long step = 0; step < control->steps; ++step) {
    context.step = step;
    context.position = control->firstPosition + step;
    for (unsigned k = 0; k < queue.count; ++k) {
      unsigned id = context.taskOrder[queue.first + k];
      const MkTaskRecord &record = context.tasks[id];
      if (Role::controller())
        controllerWait(state, context, id, record);
      else if (Role::loader())
        loaderCopy(state, context, record);
      else if (staging)
        stageNext<Tasks>(state, context, queue, k, id, record.kind);
      __syncthreads();
      if (state.taskAbandoned)
        return leave<Tasks>(state, Role::stager());
      const unsigned triggerEvent = state.task.trigger;
      context.taskId = id;
      context.staged = stagedFor<Tasks>(state, context, id);
      Tasks::run(context, state.task, state.operation); // the consumers
      __syncthreads();
      if (Role::controller())
        controllerRelease(state, context, triggerEvent);
    }

    context.taskId = 0xffffffffu; // a timeout here is no task's
    if (Role::controller())
      state.stepEnded[step & 1] = controllerStepEnds(context, argmaxEvent, argmaxTriggers, step);
    __syncthreads();
    if (state.stepEnded[step & 1])
      return leave<Tasks>(state, Role::stager());
  }
  leave<Tasks>(state, Role::stager());
}

// One task alone, on one CTA, for step 0 at `position`: no waits and no
// trigger. The loader copies the records and the consumers run the task, as
// in the loop; the host has filled the memory the task reads.
template <class Tasks, int kThreads>
__device__ void runOneTask(const MkKernelArgs &args, unsigned id, long long position) {
  using Role = Roles<kThreads>;
  extern __shared__ float4 dynamicShared[];
  __shared__ InterpreterState state;
  TaskContext context = makeContext(args, reinterpret_cast<float *>(dynamicShared));
  if (id >= context.header->numTasks)
    return;
  context.position = position;
  context.taskId = id;
  // The task's own first rows are staged, so that the check covers the
  // rows read from shared memory and those streamed past them.
  if (Role::controller())
    initStages(state.stages);
  __syncthreads();
  if (Role::loader())
    loaderCopy(state, context, context.tasks[id]);
  if constexpr (Tasks::kStageBytes > 0)
    if (Role::stager() && context.tasks[id].kind == MK_TASK_GEMV)
      stageTask(context, state.stages, stageBuffers<Tasks>(context), Tasks::kStageBytes, 0, id);
  __syncthreads();
  context.staged = stagedFor<Tasks>(state, context, id);
  Tasks::run(context, state.task, state.operation);
  leave<Tasks>(state, Role::stager());
}

} // namespace mk::gpu

#endif
