// The event protocol (core/protocol/EventProtocol.h) on the GPU: counters
// only grow within a launch, and a wait asks for mk_event_threshold.
//
// One thread of the CTA waits (an acquire load, so that what the producers
// wrote before their release is visible once it returns, and the barrier
// that follows passes that on to the other threads); one thread triggers,
// after a barrier that orders every thread's stores before its release.
//
// Tensor parallel (kRanks > 1): an allRanks wait reads the event's counter
// on every rank (Ranks.cuh), the others' at system scope, and a task whose
// event some rank awaits that way (MK_TASK_RELEASES_TO_RANKS) releases it at
// system scope, so that the other GPUs see its stores.
#ifndef MKC_CODEGEN_DEVICE_EVENTS_CUH
#define MKC_CODEGEN_DEVICE_EVENTS_CUH

#include "codegen/device/Common.cuh"
#include "codegen/device/Ranks.cuh"
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

__device__ __forceinline__ unsigned loadAcquireSystem(const unsigned *address) {
  unsigned value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ void addReleaseSystem(unsigned *address, unsigned value) {
  asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

__device__ __forceinline__ unsigned fetchAddAcquireReleaseSystem(unsigned *address,
                                                                 unsigned value) {
  unsigned old;
  asm volatile("atom.acq_rel.sys.global.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(address), "r"(value)
               : "memory");
  return old;
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

// Spins until `counter`, event `event`'s on rank `rank` (this rank's own
// when kOtherRank is false), reaches `target`. A short pure spin first (the
// producer is usually about to finish), then __nanosleep with a growing
// pause, kept short because every microsecond a waiter oversleeps lies on
// the critical path, yet long enough that 132 spinning CTAs do not flood L2. Returns false, without
// waiting further, once the wait passes the control block's bound (raising
// MK_ERROR_WAIT_TIMEOUT, or MK_ERROR_RANK_WAIT_TIMEOUT naming the rank) or
// another CTA raised an error: either way the launch is over and the GPU
// must not hang.
template <bool kOtherRank>
__device__ inline bool waitForCounter(const TaskContext &context, const unsigned *counter,
                                      unsigned event, unsigned target, unsigned rank) {
  auto load = [](const unsigned *address) {
    return kOtherRank ? loadAcquireSystem(address) : loadAcquire(address);
  };
  if (load(counter) >= target)
    return true;
  constexpr unsigned kSpins = 64, kMaxPauseNs = 64;
  unsigned long long started = globalTimer();
  unsigned pause = 0;
  for (unsigned attempt = 1;; ++attempt) {
    if (attempt > kSpins) {
      pause = pause == 0 ? 32 : (pause < kMaxPauseNs ? 2 * pause : kMaxPauseNs);
      __nanosleep(pause);
    }
    if (load(counter) >= target)
      return true;
    if (attempt % 32 == 0) {
      if (loadRelaxed(&context.control->error) != MK_ERROR_NONE)
        return false;
      if (globalTimer() - started > context.control->waitTimeoutNs) {
        if (kOtherRank)
          raiseError(context, MK_ERROR_RANK_WAIT_TIMEOUT,
                     static_cast<long long>((static_cast<unsigned long long>(rank) << 32) | target),
                     event);
        else
          raiseError(context, MK_ERROR_WAIT_TIMEOUT, static_cast<long long>(target), event);
        return false;
      }
    }
  }
}

// Spins until this rank's counter[event] reaches `target`.
__device__ inline bool waitForCount(const TaskContext &context, unsigned event,
                                    unsigned target) {
  return waitForCounter<false>(context, context.counters + event, event, target, 0);
}

// The same on every rank, this one's first.
__device__ inline bool waitForCountOnRanks(const TaskContext &context, unsigned event,
                                           unsigned target) {
  if (!waitForCount(context, event, target))
    return false;
#if MK_RANKS > 1
  for (unsigned r = 0; r < rankPeers.ranks; ++r)
    if (r != rankPeers.rank &&
        !waitForCounter<true>(context, rankPeers.counters[r] + event, event, target, r))
      return false;
#endif
  return true;
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
      wait = {record.event, context.events[record.event].triggerCount, record.stepOffset,
              record.allRanks};
    }
    // The validator keeps every threshold of a launch within 32 bits.
    unsigned target = static_cast<unsigned>(
        mk_event_threshold(wait.triggerCount, context.step, wait.stepOffset));
    if (target == 0)
      continue; // the previous step of step 0: nothing to wait for
    bool reached = kRanks > 1 && wait.allRanks ? waitForCountOnRanks(context, wait.event, target)
                                               : waitForCount(context, wait.event, target);
    if (!reached)
      return false;
  }
  return true;
}

// Called by one thread once every thread of the CTA has stored the task's
// results and passed a barrier. The release is cumulative: the other
// threads' stores, ordered before it by the barrier, are visible to whoever
// acquires the count, so no separate fence is needed (a full fence here
// would sit on the critical path of every dependency).
// `flags`: the task's (MkTaskRecord.flags).
__device__ __forceinline__ void trigger(const TaskContext &context, unsigned event,
                                        unsigned flags) {
  if (kRanks > 1 && (flags & MK_TASK_RELEASES_TO_RANKS))
    addReleaseSystem(context.counters + event, 1);
  else
    addRelease(context.counters + event, 1);
}

// The same for an event an inline task waits on: true for the one trigger
// of the step that completes its count (the validator allows no other
// trigger of that event to run a step ahead), whose CTA then runs the
// inline task, having acquired what the other triggers released.
__device__ __forceinline__ bool triggerCompletes(const TaskContext &context, unsigned event,
                                                 unsigned triggerCount, unsigned flags) {
  unsigned before = kRanks > 1 && (flags & MK_TASK_RELEASES_TO_RANKS)
                        ? fetchAddAcquireReleaseSystem(context.counters + event, 1)
                        : fetchAddAcquireRelease(context.counters + event, 1);
  return before + 1 == static_cast<unsigned>(mk_event_threshold(triggerCount, context.step, 0));
}

} // namespace mk::gpu

#endif
