// The event protocol (core/protocol/EventProtocol.h) on the GPU: counters
// only grow within a launch, and a wait asks for mk_event_threshold.
//
// One thread of the CTA waits (an acquire load, so that what the producers
// wrote before their release is visible once it returns, and the barrier
// that follows passes that on to the other threads); one thread triggers,
// after a barrier that orders every thread's stores before its release.
#ifndef MKC_CODEGEN_DEVICE_EVENTS_CUH
#define MKC_CODEGEN_DEVICE_EVENTS_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/EventProtocol.h"

namespace mk::gpu {

__device__ __forceinline__ unsigned loadAcquire(const unsigned *address) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ void addRelease(unsigned *address, unsigned value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// The count before the add: an acquire as well as a release, so that the
// trigger that completes a count has what every other trigger released.
__device__ __forceinline__ unsigned fetchAddAcquireRelease(unsigned *address, unsigned value) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(address), "r"(value)
               : "memory");
  return old;
}

// Spins until counter[event] reaches `target`. A short pure spin first (the
// producer is usually about to finish), then __nanosleep with a growing
// pause, kept short because every microsecond a waiter oversleeps lies on
// the critical path, yet long enough that 132 spinning CTAs do not flood L2. Returns false, without
// waiting further, once the wait passes the control block's bound (raising
// MK_ERROR_WAIT_TIMEOUT) or another CTA raised an error: either way the
// launch is over and the GPU must not hang.
__device__ inline bool waitForCount(const TaskContext &context, unsigned event,
                                    unsigned target) {
  const unsigned *counter = context.counters + event;
  if (loadAcquire(counter) >= target)
    return true;
  constexpr unsigned kSpins = 64, kMaxPauseNs = 64;
  unsigned long long started = globalTimer();
  unsigned pause = 0;
  for (unsigned attempt = 1;; ++attempt) {
    if (attempt > kSpins) {
      pause = pause == 0 ? 32 : (pause < kMaxPauseNs ? 2 * pause : kMaxPauseNs);
      __nanosleep(pause);
    }
    if (loadAcquire(counter) >= target)
      return true;
    if (attempt % 32 == 0) {
      if (loadRelaxed(&context.control->error) != MK_ERROR_NONE)
        return false;
      if (globalTimer() - started > context.control->waitTimeoutNs) {
        raiseError(context, MK_ERROR_WAIT_TIMEOUT, static_cast<long long>(target), event);
        return false;
      }
    }
  }
}

// All waits of a queue entry's task for the context's step; called by one
// thread. The entry holds the first MK_ENTRY_WAITS resolved; any more are
// read from the blob's waits and events.
__device__ inline bool waitForTask(const TaskContext &context, const MkQueueEntry &entry) {
  for (unsigned i = 0; i < entry.task.numWaits; ++i) {
    MkResolvedWait wait;
    if (i < MK_ENTRY_WAITS) {
      wait = entry.waits[i];
    } else {
      MkWaitRecord record = context.waits[entry.task.firstWait + i];
      wait = {record.event, context.events[record.event].triggerCount, record.stepOffset, 0};
    }
    // The validator keeps every threshold of a launch within 32 bits.
    unsigned target = static_cast<unsigned>(
        mk_event_threshold(wait.triggerCount, context.step, wait.stepOffset));
    if (target == 0)
      continue; // the previous step of step 0: nothing to wait for
    if (!waitForCount(context, wait.event, target))
      return false;
  }
  return true;
}

// Called by one thread once every thread of the CTA has stored the task's
// results and passed a barrier. The release is cumulative: the other
// threads' stores, ordered before it by the barrier, are visible to whoever
// acquires the count, so no separate fence is needed (a full fence here
// would sit on the critical path of every dependency).
__device__ __forceinline__ void trigger(const TaskContext &context, unsigned event) {
  addRelease(context.counters + event, 1);
}

// The same for an event an inline task waits on: true for the one trigger
// of the step that completes its count (the validator allows no other
// trigger of that event to run a step ahead), whose CTA then runs the
// inline task, having acquired what the other triggers released.
__device__ __forceinline__ bool triggerCompletes(const TaskContext &context, unsigned event,
                                                 unsigned triggerCount) {
  unsigned before = fetchAddAcquireRelease(context.counters + event, 1);
  return before + 1 == static_cast<unsigned>(mk_event_threshold(triggerCount, context.step, 0));
}

} // namespace mk::gpu

#endif
