// The other ranks of a tensor-parallel kernel (kRanks > 1,
// docs/tensor-parallel.md): where every rank's event counters and
// activation arena are, found once a launch through NCCL's device API, and
// the loads that read them. Every rank registered one NCCL window with the
// same layout (MkRanks): its counters and its activation arena at the same
// offsets. The NCCL call is linked into the kernel from a part compiled
// ahead of time (codegen/ranks/NcclDevice.cu): NVRTC cannot compile NCCL's
// headers. Without a window every rank runs on this GPU (a check of the
// kernel on one GPU) and MkRanks gives each rank's memory itself.
#ifndef MKC_CODEGEN_DEVICE_RANKS_CUH
#define MKC_CODEGEN_DEVICE_RANKS_CUH

#include "codegen/device/Common.cuh"

#if MK_RANKS > 1
// ncclGetLsaPointer(window, offset, peer): the address at which this GPU
// reads `offset` bytes into rank `peer`'s part of the window.
extern "C" __device__ void *mk_nccl_lsa_pointer(const void *window, unsigned long long offset,
                                                int peer);
#endif

namespace mk::gpu {

struct RankPeers {
  unsigned rank, ranks;
  const unsigned *counters[MK_MAX_RANKS]; // this rank's own: context.counters
  const float *activations[MK_MAX_RANKS]; // this rank's own: context.activations
};

#if MK_RANKS > 1
// The table, in static shared memory at a fixed address, so that no
// register holds a pointer to it through the tasks. Only a kernel of
// several ranks has it, and the code that reads it.
__shared__ RankPeers rankPeers;
#endif

// 0 when the launch names a rank of the kernel's, else MK_MISMATCH_RANKS.
__device__ inline unsigned ranksMismatch(const TaskContext &context) {
  if (context.header->ranks != static_cast<unsigned>(kRanks))
    return MK_MISMATCH_RANKS;
  if constexpr (kRanks > 1) {
    const MkRanks *ranks = reinterpret_cast<const MkRanks *>(context.control->ranks);
    if (ranks == nullptr || ranks->ranks != static_cast<unsigned>(kRanks) ||
        ranks->rank >= ranks->ranks)
      return MK_MISMATCH_RANKS;
    if (ranks->window == 0)
      for (int r = 0; r < kRanks; ++r)
        if (ranks->bases[r] == 0)
          return MK_MISMATCH_RANKS;
  }
  return 0;
}

// Called by one thread of each CTA once the launch is accepted; a CTA
// barrier then gives every thread the table. Not inlined: once a launch,
// and inlined its registers crowd the interpreter's (the 8B shape's kernel
// of 2 ranks spilled). Given the addresses alone, so that no TaskContext
// goes to memory for the call.
__device__ __noinline__ void findRankPeers(const MkControlBlock *control,
                                           const unsigned *counters, const float *activations) {
#if MK_RANKS > 1
  RankPeers &peers = rankPeers;
  const MkRanks &ranks = *reinterpret_cast<const MkRanks *>(control->ranks);
  const void *window = reinterpret_cast<const void *>(ranks.window);
  peers.rank = ranks.rank;
  peers.ranks = ranks.ranks;
  for (unsigned r = 0; r < ranks.ranks; ++r) {
    const char *base = window ? static_cast<const char *>(mk_nccl_lsa_pointer(window, 0, r))
                              : reinterpret_cast<const char *>(ranks.bases[r]);
    bool own = r == ranks.rank;
    peers.counters[r] =
        own ? counters : reinterpret_cast<const unsigned *>(base + ranks.countersOffset);
    peers.activations[r] =
        own ? activations : reinterpret_cast<const float *>(base + ranks.activationsOffset);
  }
#endif
}

// An activation another rank wrote, read at L2 (ld.global.cg: L1 holds no
// line of another GPU's memory coherently), after the controller's acquire
// of that rank's event and a CTA barrier.
// Volatile, so that it stays after the barrier; no memory clobber, so that
// a thread's loads are all in flight at once.
__device__ __forceinline__ float loadFromRank(const float *address) {
  float value;
  asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(value) : "l"(address));
  return value;
}

} // namespace mk::gpu

#endif
