// The weight ring: a ring of shared-memory slots that one producer lane
// keeps filled with the weights of the CTA's coming gemv tasks, in queue
// order and across steps, while the consumers run whatever task is current
// and wait on whatever events it waits on. Weights never change during a
// launch and every queue is fixed, so the producer needs nothing from the
// consumers but free slots: HBM streams through attention, the hops between
// operations and the tail of the slowest SM, not only while a gemv runs.
//
// A slot holds one pass of a few consecutive warps of one gemv task, their
// rows whole (GemvRingOrder, core/protocol/GemvGeometry.h): one bulk copy
// per weight row of the gemv, since the copy engine's cost is per copy.
// Slots are numbered by a position counting every slot the launch has used;
// position n lives in slot n % kSlots, its turn there is n / kSlots. Each
// slot has two mbarriers and an owner:
//   owner  the position the slot holds or is about to: set by the producer
//          once the slot's last turn was taken. A consumer waits for it
//          before the full barrier, since a barrier's parity tells its turns
//          apart only one turn ahead, and a warp may ask for its next pass
//          more than a turn ahead of the producer;
//   full   the producer arms it with the slot's byte count and bulk-copies
//          the rows (cp.async.bulk), which completes the turn as the bytes
//          land; the consumer warps wait on it;
//   empty  counts every consumer warp: each warp of the slot arrives once it
//          has summed its rows, the producer for the warps the slot does not
//          hold; the producer waits on it before reusing the slot (it issues
//          in order, so it is never more than a turn ahead of this barrier).
// The consumers of a task find its slots from the position of its first
// (TaskContext::ringPosition, advanced after every gemv by the slots it
// took) and GemvRingOrder.
//
// The launch's end: the consumers close the ring (a flag in shared memory)
// when they leave; the producer then stops waiting for free slots and waits
// for the copies it issued to land, so that no copy writes into the shared
// memory of a CTA that has gone.
#ifndef MKC_CODEGEN_DEVICE_WEIGHTRING_CUH
#define MKC_CODEGEN_DEVICE_WEIGHTRING_CUH

#include "codegen/device/Common.cuh"
#include "core/protocol/GemvGeometry.h"

namespace mk::gpu {

__device__ __forceinline__ unsigned sharedAddress(const void *pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// The mbarrier operations the ring needs (sm_90 on; the ring is off below).
__device__ __forceinline__ void barrierInit(unsigned long long *barrier, unsigned count) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sharedAddress(barrier)), "r"(count)
               : "memory");
#endif
}

__device__ __forceinline__ bool barrierTryWait(unsigned long long *barrier, unsigned parity) {
#if __CUDA_ARCH__ >= 900
  unsigned done;
  asm volatile("{\n .reg .pred p;\n"
               " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}"
               : "=r"(done)
               : "r"(sharedAddress(barrier)), "r"(parity)
               : "memory");
  return done != 0;
#else
  return true;
#endif
}

__device__ __forceinline__ void barrierArrive(unsigned long long *barrier, unsigned count = 1) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" ::"r"(sharedAddress(barrier)),
               "r"(count)
               : "memory");
#endif
}

__device__ __forceinline__ void barrierExpectBytes(unsigned long long *barrier, unsigned bytes) {
#if __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                   sharedAddress(barrier)),
               "r"(bytes)
               : "memory");
#endif
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global
// into shared memory by the copy engine, completing on `barrier`.
__device__ __forceinline__ void bulkCopy(void *target, const void *source, unsigned bytes,
                                         unsigned long long *barrier) {
#if __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
               "[%3];" ::"r"(sharedAddress(target)),
               "l"(source), "r"(bytes), "r"(sharedAddress(barrier))
               : "memory");
#endif
}

// A gemv operation's geometry at run time, from its record: the cut of its
// rows among warps, as its consumers computed it at compile time (the ring
// moves whole rows, so the batches, which the loads in flight set, do not
// matter here).
template <int kThreads>
__device__ __forceinline__ GemvGeometry gemvGeometryOf(const MkOperationRecord &op) {
  return gemvGeometry(static_cast<int>(op.inputLength), MK_EPILOGUE_GATED(op.epilogue) ? 2 : 1,
                      kThreads, 1);
}

// The ring's place in dynamic shared memory, by the kernel's constants:
// kSlots full barriers, kSlots empty ones, kSlots owners, then the slots.
// kWarps consumer warps arrive on each empty barrier per turn.
template <int kSlots, int kSlotBytes, int kWarps>
struct WeightRing {
  static_assert(kSlots > 0 && kSlotBytes % 128 == 0, "whole slots, 128-byte aligned");
  static constexpr int kCount = kSlots, kSlotSize = kSlotBytes, kConsumerWarps = kWarps;
  static constexpr int kBarrierBytes = (3 * kSlots * 8 + 127) / 128 * 128;
  static constexpr int kBytes = kBarrierBytes + kSlots * kSlotBytes;

  unsigned char *base; // 128-byte aligned

  __device__ unsigned long long *full(unsigned long long position) const {
    return reinterpret_cast<unsigned long long *>(base) + position % kSlots;
  }
  __device__ unsigned long long *empty(unsigned long long position) const {
    return reinterpret_cast<unsigned long long *>(base) + kSlots + position % kSlots;
  }
  __device__ volatile unsigned long long *owner(unsigned long long position) const {
    return reinterpret_cast<unsigned long long *>(base) + 2 * kSlots + position % kSlots;
  }
  __device__ unsigned char *slot(unsigned long long position) const {
    return base + kBarrierBytes + (position % kSlots) * kSlotBytes;
  }
  __device__ static unsigned turn(unsigned long long position) {
    return static_cast<unsigned>(position / kSlots) & 1u;
  }

  // One thread, before any role uses the ring; a CTA barrier must follow.
  __device__ void init() const {
    for (int i = 0; i < kSlots; ++i) {
      barrierInit(full(i), 1);
      barrierInit(empty(i), kWarps);
      *owner(i) = ~0ull;
    }
#if __CUDA_ARCH__ >= 900
    // The copy engine (the async proxy) completes the full barriers.
    asm volatile("fence.mbarrier_init.release.cluster;\n fence.proxy.async.shared::cta;" ::
                     : "memory");
#endif
  }

  // Consumer warp: waits until position's rows have landed. The first lane
  // waits (a warp's 32 lanes spinning on shared memory would take the
  // bandwidth the copies and the other warps need), then every lane sees
  // the barrier's turn complete, which makes the copied bytes visible to
  // it. Past the launch's wait bound the error is raised and the slot read
  // as it is: the launch then ends at the step's end, with the error
  // reported, instead of hanging.
  __device__ const unsigned char *acquire(const TaskContext &context,
                                          unsigned long long position) const {
    unsigned long long *barrier = full(position);
    const unsigned parity = turn(position);
    if (threadIdx.x % kWarpSize == 0 &&
        (*owner(position) != position || !barrierTryWait(barrier, parity))) {
      unsigned long long started = globalTimer();
      while (*owner(position) != position || !barrierTryWait(barrier, parity)) {
        if (globalTimer() - started > context.control->waitTimeoutNs) {
          raiseError(context, MK_ERROR_WAIT_TIMEOUT, static_cast<long long>(position));
          break;
        }
      }
    }
    __syncwarp();
    barrierTryWait(barrier, parity);
    return slot(position);
  }

  // Consumer warp, once it is done with position's rows.
  __device__ void release(unsigned long long position) const {
    __syncwarp();
    if (threadIdx.x % kWarpSize == 0)
      barrierArrive(empty(position));
  }
};

// The ring of a kernel's gemvs, kThreads consumers.
template <int kSlots, int kSlotBytes, int kThreads>
using GemvWeightRing = WeightRing<kSlots, kSlotBytes, kThreads / kWarpSize>;

// Where warp-in-slot `warpInSlot`'s group `group` finds weight row r of its
// row in a slot: each weight row's rows of the slot one after the other.
__device__ __forceinline__ int ringRowOffset(const GemvGeometry &g, int slotRows, int r,
                                             int warpInSlot, int group) {
  return (r * slotRows + warpInSlot * g.rowsPerWarp + group) * (g.chunks * 16);
}

// The producer's view of one gemv task: where each slot's bytes are, by the
// same geometry as its consumers. Everything it needs of the task's records
// is read once, into shared memory (the producer's scratch, which keeps the
// task's description out of the registers the consumers' code needs).
struct GemvRingSource {
  GemvGeometry g;
  unsigned long long begin, end, secondRows; // the tile; where a SiluMul's up rows start
  const unsigned short *weight[MK_MAX_GEMV_WEIGHTS];
  unsigned long long weightEnd[MK_MAX_GEMV_WEIGHTS]; // stacked row where each weight ends
  int numWeights;

  template <int kThreads>
  __device__ __forceinline__ static GemvRingSource of(const TaskContext &context,
                                                      const MkQueueEntry &entry) {
    GemvRingSource source;
    const MkOperationRecord &op = entry.operation;
    source.g = gemvGeometryOf<kThreads>(op);
    source.begin = entry.task.begin;
    source.end = entry.task.end;
    source.secondRows = op.outputLength;
    source.numWeights = op.numWeights;
    unsigned long long rows = 0;
#pragma unroll
    for (int i = 0; i < MK_MAX_GEMV_WEIGHTS; ++i) {
      bool present = i < op.numWeights;
      source.weight[i] = present ? context.weights + op.weights[i] : nullptr;
      rows += present ? op.weightRows[i] : 0;
      source.weightEnd[i] = present ? rows : 0;
    }
    return source;
  }

  // Copies stacked rows [first, first + rows) to `target`, completing on
  // `full`: one copy per weight they lie in (nearly always one).
  __device__ __forceinline__ void copyRows(unsigned long long first, unsigned long long rows,
                                           unsigned char *target, unsigned long long *full) const {
    const unsigned long long rowBytes = static_cast<unsigned long long>(g.chunks) * 16;
    unsigned long long start = 0;
#pragma unroll
    for (int i = 0; i < MK_MAX_GEMV_WEIGHTS; ++i) {
      if (i < numWeights && rows > 0 && first < weightEnd[i]) {
        unsigned long long here = min(rows, weightEnd[i] - first);
        bulkCopy(target, weight[i] + (first - start) * (g.chunks * 8),
                 static_cast<unsigned>(here * rowBytes), full);
        target += here * rowBytes;
        first += here;
        rows -= here;
      }
      start = weightEnd[i];
    }
  }

  // Fills `slot` with pass `pass` of the warps [firstWarp, firstWarp +
  // warps), completing on `full`.
  __device__ __forceinline__ void copySlot(unsigned long long pass, int firstWarp, int warps,
                                           unsigned char *slot, unsigned long long *full) const {
    unsigned long long first = begin + pass * g.rowsPerPass() + firstWarp * g.rowsPerWarp;
    unsigned long long rows = min(static_cast<unsigned long long>(warps) * g.rowsPerWarp, end - first);
    const unsigned long long rowBytes = static_cast<unsigned long long>(g.chunks) * 16;
    // The barrier expects every byte before the first copy can land.
    barrierExpectBytes(full, static_cast<unsigned>(rows * rowBytes * g.weightRows));
    const int slotRows = warps * g.rowsPerWarp;
    for (int r = 0; r < g.weightRows; ++r)
      copyRows(first + (r == 1 ? secondRows : 0), rows, slot + ringRowOffset(g, slotRows, r, 0, 0),
               full);
  }
};

// Whether a task's weights pass through the ring: the gemvs whose rows are
// whole 16-byte chunks (the others read their weights themselves).
__device__ __forceinline__ bool streamsThroughRing(const MkTaskRecord &task,
                                                   const MkOperationRecord &op) {
  return task.kind == MK_TASK_GEMV && op.inputLength % 8 == 0;
}

// The slots `task` takes from the ring (0 for a task that takes none).
template <class Ring, int kThreads>
__device__ __forceinline__ unsigned long long ringSlotsOf(const MkTaskRecord &task,
                                                          const MkOperationRecord &op) {
  if (!streamsThroughRing(task, op))
    return 0;
  return GemvRingOrder(gemvGeometryOf<kThreads>(op), task.end - task.begin, Ring::kSlotSize)
      .slots();
}

// The producer: one lane fills the ring with the weights of `count` queue
// entries, `steps` times over, until done or the ring is closed; then waits
// for its copies to land. With whole passes of several warps per slot, one
// lane issues a copy per 16 KiB or more, more than an SM's share of HBM.
template <int kThreads, class Ring>
__device__ void produceWeights(const TaskContext &context, const Ring &ring,
                               const MkQueueEntry *entries, unsigned count, long long steps,
                               const volatile int *closed, GemvRingSource &source) {
  if (threadIdx.x % kWarpSize != 0)
    return;
  unsigned long long issued = 0;
  bool open = true;
  for (long long step = 0; open && step < steps; ++step) {
    for (unsigned k = 0; open && k < count; ++k) {
      if (!streamsThroughRing(entries[k].task, entries[k].operation))
        continue;
      source = GemvRingSource::of<kThreads>(context, entries[k]);
      const GemvRingOrder order(source.g, source.end - source.begin, Ring::kSlotSize);
      for (unsigned long long pass = 0; open && pass < order.passes(); ++pass) {
        const int warps = order.warpsAt(pass);
        for (int firstWarp = 0; firstWarp < warps; firstWarp += order.warpsPerSlot) {
          // The slot's last turn must have been taken (its first turn
          // needs nothing: parity 1 of a new barrier reads as completed).
          while (!barrierTryWait(ring.empty(issued), Ring::turn(issued) ^ 1u))
            if (*closed) {
              open = false;
              break;
            }
          if (!open)
            break;
          const int held = min(order.warpsPerSlot, warps - firstWarp);
          *ring.owner(issued) = issued;
          source.copySlot(pass, firstWarp, held, ring.slot(issued), ring.full(issued));
          // The warps this slot does not hold will not arrive.
          barrierArrive(ring.empty(issued), Ring::kConsumerWarps - held);
          ++issued;
        }
      }
    }
  }
  // Every issued copy lands before the CTA may leave.
  for (unsigned long long n = issued > Ring::kCount ? issued - Ring::kCount : 0; n < issued; ++n)
    while (!barrierTryWait(ring.full(n), Ring::turn(n)))
      ;
}

} // namespace mk::gpu

#endif
