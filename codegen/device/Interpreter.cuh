// The persistent kernel's main loop: one CTA per SM, each interpreting its
// SM's queue of the schedule blob, every step of the launch. Its threads
// play named roles, each written in one place below:
//
//   controller  thread 0. When the task asks (AwaitInputs): waits on its
//               events (Events.cuh) and marks the trace. After it: where an
//               inline task waits on the task's event, triggers it with an
//               acquire and release that tells whether this trigger
//               completed the step's count. At a step's end: waits for the
//               argmax and decides whether the launch goes on.
//   releaser    the first lane of the last consumer warp: after a task
//               (other than one an inline task waits on), triggers its
//               event, a release that publishes every consumer's stores.
//               The release waits until the SM's stores are seen (~0.4 us);
//               the controller meanwhile goes on to the next task's entry
//               and wait, which on small layers is the critical path
//               (bench/NOTES.md, the time between tasks).
//   loader      warp 1: while a task runs, copies the queue entry of the
//               task after the next (its record, its operation's, its waits
//               resolved) into shared memory, so that no task waits on a
//               record load and the next task's entry is there as this one
//               starts, and the entry of the inline task its trigger may
//               start; with --prefetch-bytes asks for the next task's first
//               weights in L2.
//   producer    with a weight ring (Tasks::kWeightRingSlots > 0), one lane
//               of a warp past the consumers: fills the ring with the coming
//               gemvs' weights, across tasks, waits and steps
//               (WeightRing.cuh). It joins no barrier after the start.
//   consumers   the first kThreads threads: the task's device function
//               (Tasks::run, the generated dispatcher over the kernel
//               variants). A task function first issues the loads that need
//               no input of this step (its first weights, earlier steps'
//               cache entries), then calls awaitInputs(): the controller's
//               wait and a barrier of the consumers (consumerSync).
//
//   for each step:
//     for each task of this CTA's queue (its entry and the next one's
//     already in shared memory):
//       loader starts copying the entry after the next
//       an attention chunk whose next task is a small HeadProjection tile:
//         every thread asks L2 for a row of the tile's weights (Prefetch.cuh)
//       consumers run the task: loads of constants | awaitInputs() | the rest
//       loader finishes the copy; barrier
//       releaser triggers the task's event (controller, where an inline
//       task waits on it); if that trigger completed the count:
//         consumers run the inline task; barrier; releaser triggers
//     controller waits for this step's argmax, reads stop and error; barrier
//     every CTA leaves at the same step
#ifndef MKC_CODEGEN_DEVICE_INTERPRETER_CUH
#define MKC_CODEGEN_DEVICE_INTERPRETER_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Events.cuh"
#include "codegen/device/Prefetch.cuh"
#include "codegen/device/WeightRing.cuh"

namespace mk::gpu {

// Which threads play which role, and what the roles need of a CTA.
template <class Tasks, int kThreads>
struct Roles {
  static constexpr int kLoaderWarp = 1, kRoleWarps = 2;
  static constexpr bool kProducer = Tasks::kWeightRingSlots > 0;
  static constexpr int kBlockThreads = kThreads + (kProducer ? kWarpSize : 0);
  using Ring = GemvWeightRing<kProducer ? Tasks::kWeightRingSlots : 1, Tasks::kWeightRingSlotBytes,
                              kThreads>;
  static_assert(kThreads % kWarpSize == 0 && kBlockThreads <= 1024, "whole warps, one CTA");
  static_assert(kThreads / kWarpSize >= kRoleWarps,
                "the controller and the loader each need a warp of their own");
  // __launch_bounds__(kBlockThreads, 1): one CTA per SM shares its 64K
  // registers.
  static_assert(65536 / kBlockThreads >= 64,
                "at least 64 registers per thread for the task bodies");

  __device__ static bool controller() { return threadIdx.x == 0; }
  __device__ static bool releaser() { return threadIdx.x == kThreads - kWarpSize; }
  __device__ static bool loader() { return threadIdx.x / kWarpSize == kLoaderWarp; }
  __device__ static bool producer() { return kProducer && threadIdx.x >= kThreads; }
};

// What the roles share in static shared memory.
struct InterpreterState {
  // The running task's queue entry, the next one's and the one after, by
  // the task's place in the launch modulo 3: the loader fills the third
  // while the consumers read the first, and the next is whole as the task
  // starts.
  MkQueueEntry entries[3];
  // The entry of the inline task that the running task's trigger may start,
  // and whether it did.
  MkQueueEntry inlineEntry;
  int runsInline;
  unsigned argmaxTask;
  int launchRefused, taskAbandoned;
  // Set by the controller as the consumers leave: the producer stops.
  volatile int ringClosed;
  // The producer's description of the gemv whose weights it streams.
  GemvRingSource ringSource;
  // By step parity: a CTA with an empty queue passes from one step's end to
  // the next with no barrier between, and must not overwrite the flag while
  // its threads still read it.
  int stepEnded[2];
  // The controller's trace: the host's buffer and where the current task's
  // times go (both nullptr without a trace). Here rather than in registers,
  // so that tracing costs the task bodies no register.
  unsigned long long *trace, *times;
};
// The entries come first, and the state is declared 16-byte aligned.
static_assert(sizeof(MkQueueEntry) % 16 == 0,
              "queue entries are copied in 16-byte units to 16-byte aligned places");

__device__ inline TaskContext makeContext(const MkKernelArgs &args, float *shared,
                                          unsigned char *ring) {
  const unsigned char *blob = reinterpret_cast<const unsigned char *>(args.blob);
  const MkBlobHeader *header = reinterpret_cast<const MkBlobHeader *>(blob);
  TaskContext context;
  context.header = header;
  context.queues = reinterpret_cast<const MkQueue *>(blob + header->queuesOffset);
  context.entries = reinterpret_cast<const MkQueueEntry *>(blob + header->entriesOffset);
  context.tasks = reinterpret_cast<const MkTaskRecord *>(blob + header->tasksOffset);
  context.waits = reinterpret_cast<const MkWaitRecord *>(blob + header->waitsOffset);
  context.events = reinterpret_cast<const MkEventRecord *>(blob + header->eventsOffset);
  context.params = reinterpret_cast<const float *>(blob + header->paramsOffset);
  context.weights = reinterpret_cast<const unsigned short *>(args.weights);
  context.activations = reinterpret_cast<float *>(args.activations);
  context.kv = reinterpret_cast<float *>(args.kv);
  context.counters = reinterpret_cast<unsigned *>(args.counters);
  context.control = reinterpret_cast<MkControlBlock *>(args.control);
  context.shared = shared;
  context.ring = ring;
  context.ringPosition = 0;
  context.step = 0;
  context.position = 0;
  context.taskId = 0xffffffffu;
  return context;
}

// 0 when the blob and the launch are what this kernel was built for, else
// the MkLaunchMismatch.
template <int kBlockThreads, int kStepRows>
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
  if (blockDim.x != kBlockThreads)
    return MK_MISMATCH_BLOCK;
  const MkControlBlock *control = context.control;
  if (control->firstPosition < 0 || control->steps < 0 ||
      control->firstPosition + control->steps > header->maxContext)
    return MK_MISMATCH_STEPS;
  if (argmaxTask >= header->numTasks)
    return MK_MISMATCH_NO_ARGMAX;
  if (header->rows != kStepRows || (kStepRows > 1 && header->sequences != kStepRows))
    return MK_MISMATCH_ROWS;
  if (unsigned mismatch = ranksMismatch(context))
    return mismatch;
  if constexpr (kStepRows > 1) {
    // Every row's slots within its sequence's caches, at every step.
    const MkRowPlan *plans = reinterpret_cast<const MkRowPlan *>(control->rowPlans);
    if (plans == nullptr)
      return MK_MISMATCH_ROWS;
    for (int r = 0; r < kStepRows; ++r) {
      const MkRowPlan &plan = plans[r];
      // Up to its activeUntil: an idle row reads and writes no KV slot
      // (StepRows.cuh), so a row that starts late and stops early may share
      // a launch with longer ones.
      long long active = min(control->steps, plan.activeUntil);
      long long last = plan.firstPosition + (active - 1) * plan.positionsPerStep;
      if (plan.sequence < 0 || plan.sequence >= header->sequences || plan.firstPosition < 0 ||
          plan.positionsPerStep < 0 || (active > 0 && last >= header->maxContext))
        return MK_MISMATCH_ROWS;
    }
  }
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

// Controller, when the running task asks: its waits, marked in the trace.
// An inline task has nothing to wait for: the trigger that started it
// acquired its one event's count.
__device__ __forceinline__ void controllerWait(InterpreterState &state, const TaskContext &context,
                                               const MkQueueEntry &entry) {
  state.times = traceTimes(state.trace, context, entry.id);
  markTime(state.times, MK_TRACE_WAIT);
  state.taskAbandoned = &entry != &state.inlineEntry && !waitForTask(context, entry);
  markTime(state.times, MK_TRACE_START);
}

// The flags the task's release needs (MkTaskRecord.flags), read once the
// task has run and before the barrier past which the loader may overwrite
// its entry: no register holds them through the task. None with one rank.
__device__ __forceinline__ unsigned releaseFlags(const MkQueueEntry &entry) {
  return kRanks > 1 ? entry.task.flags : 0u;
}

// Every consumer, after they all passed the task's closing barrier: the
// controller marks the task's end, the releaser triggers its event. The
// release is cumulative: the consumers' stores, ordered before it by the
// barrier, are visible to whoever acquires the count, so no separate fence
// is needed (a full fence here would sit on the critical path).
template <class Role>
__device__ __forceinline__ void releaseTask(InterpreterState &state, const TaskContext &context,
                                            unsigned event, unsigned flags) {
  if (Role::controller())
    markTime(state.times, MK_TRACE_END);
  if (Role::releaser())
    trigger(context, event, flags);
}

// Controller, after every consumer passed the closing barrier of a task
// whose event an inline task waits on: whether this trigger completed the
// step's count, so that this CTA runs the inline task next.
__device__ __forceinline__ bool controllerReleaseCompletes(InterpreterState &state,
                                                          const TaskContext &context,
                                                          unsigned event, unsigned flags) {
  markTime(state.times, MK_TRACE_END);
  return triggerCompletes(context, event, state.inlineEntry.waits[0].triggerCount, flags);
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

// Loader: starts copying a queue entry into shared memory, 16 bytes a lane,
// without waiting for it (cp.async: the copy needs no register, and the
// loader's lanes go on to run the task); loaderFinish waits for it.
__device__ __forceinline__ void loaderStart(MkQueueEntry &into, const MkQueueEntry &from) {
  constexpr int kUnits = sizeof(MkQueueEntry) / 16;
  for (int i = threadIdx.x % kWarpSize; i < kUnits; i += kWarpSize)
    copyAsync16(reinterpret_cast<uint4 *>(&into) + i, reinterpret_cast<const uint4 *>(&from) + i,
                true);
}

__device__ __forceinline__ void loaderFinish() { copyWait(); }

// What a task function calls once it has issued the loads that need no
// input of this step: the controller waits on the task's events, then a
// barrier passes what the wait acquired to every thread. Every thread calls
// it exactly once, in uniform control flow; false when the launch is over
// (an error or a timeout) and the task must stop.
template <int kThreads>
struct AwaitInputs {
  InterpreterState &state;
  const TaskContext &context;
  const MkQueueEntry &entry;
  __device__ __forceinline__ bool operator()() const {
    if (threadIdx.x == 0)
      controllerWait(state, context, entry);
    consumerSync<kThreads>();
    return !state.taskAbandoned;
  }
};

// The same for a task run alone, whose inputs the host has written.
template <int kThreads>
struct InputsWritten {
  __device__ __forceinline__ bool operator()() const {
    consumerSync<kThreads>();
    return true;
  }
};

// The inline task whose entry the loader copied (state.inlineEntry), on
// this CTA, after the trigger that completed its one wait; then its own
// trigger (an inline task starts no other: the validator allows no chains).
template <class Tasks, int kThreads>
__device__ __forceinline__ void runInline(InterpreterState &state, TaskContext &context) {
  using Role = Roles<Tasks, kThreads>;
  const MkQueueEntry &entry = state.inlineEntry;
  // Read now: once the closing barrier is passed, the loader may copy the
  // next task's inline entry over this one.
  const unsigned triggerEvent = entry.task.trigger;
  context.taskId = entry.id;
  Tasks::runInline(context, entry.task, entry.operation,
                   AwaitInputs<kThreads>{state, context, entry});
  const unsigned triggerFlags = releaseFlags(entry);
  consumerSync<kThreads>();
  releaseTask<Role>(state, context, triggerEvent, triggerFlags);
}

// ---------------------------------------------------------------------------
// The loop.
// ---------------------------------------------------------------------------

// Where in state.entries the entry after the one in `slot` is, and the one
// after that.
__device__ __forceinline__ unsigned nextEntrySlot(unsigned slot) { return slot == 2 ? 0 : slot + 1; }
__device__ __forceinline__ unsigned entrySlotAfterNext(unsigned slot) {
  return slot == 0 ? 2 : slot - 1;
}

// The consumers' part of the launch: every task of the CTA's queue, every
// step, until the last step, an EOS, an error or a timeout.
template <class Tasks, int kThreads>
__device__ void consumeQueue(InterpreterState &state, TaskContext &context,
                             const MkQueueEntry *entries, unsigned count) {
  using Role = Roles<Tasks, kThreads>;
  MkControlBlock *control = context.control;
  const unsigned argmaxEvent = context.tasks[state.argmaxTask].trigger;
  const unsigned argmaxTriggers = context.events[argmaxEvent].triggerCount;
  unsigned slot = 0; // which of state.entries holds the running task's
  for (long long step = 0; step < control->steps; ++step) {
    context.step = step;
    context.position = control->firstPosition + step;
    for (unsigned k = 0; k < count; ++k) {
      const MkQueueEntry &entry = state.entries[slot];
      // Read now: the loader overwrites this entry while the task after
      // the next runs.
      const unsigned triggerEvent = entry.task.trigger, inlineEntry = entry.inlineEntry;
      // The queue wraps into the next step's first tasks.
      if (Role::loader()) {
        loaderStart(state.entries[entrySlotAfterNext(slot)], entries[(k + 2) % count]);
        if (Tasks::kInlineTasks && inlineEntry != MK_NO_INLINE)
          loaderStart(state.inlineEntry, context.entries[inlineEntry]);
      }
      if constexpr (Tasks::kHeadProjections)
        if (entry.task.kind == MK_TASK_ATTENTION_CHUNK)
          prefetchHeadProjectionTile<kThreads>(context, state.entries[nextEntrySlot(slot)]);
      context.taskId = entry.id;
      Tasks::run(context, entry.task, entry.operation, AwaitInputs<kThreads>{state, context, entry});
      const unsigned triggerFlags = releaseFlags(entry);
      if (state.taskAbandoned) {
        loaderFinish();
        return;
      }
      if constexpr (Role::kProducer)
        context.ringPosition +=
            ringSlotsOf<typename Role::Ring, kThreads>(entry.task, entry.operation);
      if (Role::loader()) {
        loaderFinish();
        // The next task's first weights into L2, while this one's closing
        // barrier, its release and the next one's wait go by.
        if (Tasks::kPrefetchBytes > 0 && threadIdx.x % kWarpSize == 0)
          prefetchTaskWeights(context, state.entries[nextEntrySlot(slot)].task,
                              state.entries[nextEntrySlot(slot)].operation,
                              Tasks::kPrefetchBytes);
      }
      consumerSync<kThreads>();
      if (!Tasks::kInlineTasks || inlineEntry == MK_NO_INLINE) {
        releaseTask<Role>(state, context, triggerEvent, triggerFlags);
      } else if constexpr (Tasks::kInlineTasks) {
        if (Role::controller())
          state.runsInline =
              controllerReleaseCompletes(state, context, triggerEvent, triggerFlags);
        consumerSync<kThreads>();
        if (state.runsInline)
          runInline<Tasks, kThreads>(state, context);
      }
      slot = nextEntrySlot(slot);
    }

    context.taskId = 0xffffffffu; // a timeout here is no task's
    if (Role::controller())
      state.stepEnded[step & 1] = controllerStepEnds(context, argmaxEvent, argmaxTriggers, step);
    consumerSync<kThreads>();
    if (state.stepEnded[step & 1])
      return;
  }
}

// The dynamic shared memory: the tasks' part, then the weight ring's.
template <class Tasks>
__device__ __forceinline__ unsigned char *weightRingIn(float4 *dynamicShared) {
  return Tasks::kWeightRingSlots > 0
             ? reinterpret_cast<unsigned char *>(dynamicShared) + Tasks::kWeightRingOffset
             : nullptr;
}

// What every thread does first, every role together: the ring's barriers
// and, after a CTA barrier, the queue's first two entries in shared memory
// (`count` of them from `first`; the first again where there is one).
template <class Tasks, int kThreads>
__device__ __forceinline__ void startRoles(InterpreterState &state, const TaskContext &context,
                                           const MkQueueEntry *first, unsigned count) {
  using Role = Roles<Tasks, kThreads>;
  if (Role::controller()) {
    state.ringClosed = 0;
    if constexpr (Role::kProducer)
      typename Role::Ring{context.ring}.init();
  }
  if (Role::loader() && count > 0) {
    loaderStart(state.entries[0], first[0]);
    loaderStart(state.entries[1], first[1 % count]);
    loaderFinish();
  }
  __syncthreads();
}

template <class Tasks, int kThreads>
__device__ void runMegakernel(const MkKernelArgs &args) {
  using Role = Roles<Tasks, kThreads>;
  static_assert(sizeof(InterpreterState) + kThreads / kWarpSize * 16 <= Tasks::kStaticSharedReserve,
                "the interpreter's state and the reductions' scratch fit the reserve");
  extern __shared__ float4 dynamicShared[];
  __shared__ __align__(16) InterpreterState state;

  TaskContext context = makeContext(args, reinterpret_cast<float *>(dynamicShared),
                                    weightRingIn<Tasks>(dynamicShared));
  MkControlBlock *control = context.control;

  if (Role::controller())
    state.argmaxTask = 0xffffffffu;
  __syncthreads();
  for (unsigned id = threadIdx.x; id < context.header->numTasks; id += Role::kBlockThreads)
    if (context.tasks[id].kind == MK_TASK_ARGMAX)
      state.argmaxTask = id;
  __syncthreads();
  if (Role::controller()) {
    unsigned mismatch =
        launchMismatch<Role::kBlockThreads, Tasks::kStepRows>(context, state.argmaxTask);
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
  // The other ranks' counters and activations; startRoles' barrier hands
  // the table to every thread.
  if (kRanks > 1 && Role::controller())
    findRankPeers(context.control, context.counters, context.activations);

  const MkQueue queue = context.queues[blockIdx.x];
  const MkQueueEntry *entries = context.entries + queue.first;
  startRoles<Tasks, kThreads>(state, context, entries, queue.count);
  if constexpr (Role::kProducer) {
    if (Role::producer()) {
      produceWeights<kThreads>(
          context, typename Role::Ring{context.ring}, entries, queue.count, control->steps,
          &state.ringClosed, state.ringSource);
      return;
    }
  }
  consumeQueue<Tasks, kThreads>(state, context, entries, queue.count);
  if (Role::controller())
    state.ringClosed = 1;
}

// One task alone, on one CTA, for step 0 at `position`: no waits and no
// trigger. The loader copies the task's records and the producer streams
// its weights as in the loop; the host has filled the memory the task reads.
template <class Tasks, int kThreads>
__device__ void runOneTask(const MkKernelArgs &args, unsigned id, long long position) {
  using Role = Roles<Tasks, kThreads>;
  extern __shared__ float4 dynamicShared[];
  __shared__ __align__(16) InterpreterState state;
  TaskContext context = makeContext(args, reinterpret_cast<float *>(dynamicShared),
                                    weightRingIn<Tasks>(dynamicShared));
  const MkBlobHeader *header = context.header;
  // The task's place in some queue: its entry.
  unsigned place = 0;
  while (place < header->numTasks && context.entries[place].id != id)
    ++place;
  if (place == header->numTasks)
    return;
  context.position = position;
  context.taskId = id;
  if constexpr (kRanks > 1) {
    // A task of a tensor-parallel kernel may read the other ranks: the
    // launch must name them.
    if (ranksMismatch(context) != 0) {
      if (threadIdx.x == 0)
        raiseError(context, MK_ERROR_LAUNCH_MISMATCH, MK_MISMATCH_RANKS);
      return;
    }
    if (threadIdx.x == 0)
      findRankPeers(context.control, context.counters, context.activations);
  }
  startRoles<Tasks, kThreads>(state, context, &context.entries[place], 1);
  if constexpr (Role::kProducer) {
    if (Role::producer()) {
      produceWeights<kThreads>(
          context, typename Role::Ring{context.ring}, &context.entries[place], 1, 1,
          &state.ringClosed, state.ringSource);
      return;
    }
  }
  Tasks::run(context, state.entries[0].task, state.entries[0].operation, InputsWritten<kThreads>{});
  if (Role::controller())
    state.ringClosed = 1;
}

} // namespace mk::gpu

#endif
