// The dynamic shared memory each task kind's device function needs, in
// floats, as a function of its kernel variant's arguments (the template
// arguments of its instantiation, in order: core/taskgraph/TaskKind.h). The
// device functions carve their shared memory with these, the code generator
// sizes the kernel's dynamic shared memory with the largest, and the
// generated dispatcher static_asserts each instantiation against it.
#ifndef MKC_CORE_PROTOCOL_SHAREDMEMORY_H
#define MKC_CORE_PROTOCOL_SHAREDMEMORY_H

#include "core/protocol/Portable.h"
#include "core/protocol/Sampling.h"

namespace mk {

// Embed stages nothing in dynamic shared memory.
MK_HOST_DEVICE constexpr mk_u64 noSharedFloats(mk_i64, mk_i64 = 0) { return 0; }

// The argmax task's sampling (codegen/device/SamplingTask.cuh), in floats:
// the candidates' keys (u64), their weights, the lanes' sums, a radix
// histogram and a few counters.
#define MK_SAMPLING_KEYS_OFFSET 0
#define MK_SAMPLING_WEIGHTS_OFFSET (2 * MK_SAMPLING_MAX_CANDIDATES)
#define MK_SAMPLING_LANE_SUMS_OFFSET (3 * MK_SAMPLING_MAX_CANDIDATES)
#define MK_SAMPLING_HISTOGRAM_OFFSET (3 * MK_SAMPLING_MAX_CANDIDATES + MK_SAMPLING_LANES)
#define MK_SAMPLING_SCALARS_OFFSET (MK_SAMPLING_HISTOGRAM_OFFSET + 256)
#define MK_SAMPLING_SHARED_FLOATS (MK_SAMPLING_SCALARS_OFFSET + 8)
MK_HOST_DEVICE constexpr mk_u64 argmaxSharedFloats(mk_i64) { return MK_SAMPLING_SHARED_FLOATS; }

// The whole input, normalized there when the gemv has a prologue norm.
MK_HOST_DEVICE constexpr mk_u64 gemvSharedFloats(mk_i64 input, mk_i64 /*epilogue*/,
                                                 mk_i64 /*norm*/, mk_i64 /*bias*/) {
  return static_cast<mk_u64>(input);
}

// Past the input, 16-byte aligned: the gemv's weights, copied there a batch
// ahead of their use, the first before its input is ready (`slots` 16-byte
// units per thread; the code generator picks how many the target's shared
// memory leaves).
MK_HOST_DEVICE constexpr mk_u64 gemvEarlyWeightsOffset(mk_i64 input) {
  return (static_cast<mk_u64>(input) * 4 + 15) / 16 * 16;
}
MK_HOST_DEVICE constexpr mk_u64 gemvSharedBytesWithEarlyWeights(mk_i64 input, mk_i64 threads,
                                                               mk_i64 slots) {
  return gemvEarlyWeightsOffset(input) + static_cast<mk_u64>(threads * slots) * 16;
}

// The group's q heads, this step's k and v (q and k normed and rotated in
// place), the q heads' scores over the chunk, and per head the max score
// and the sum of exponentials, in that order.
MK_HOST_DEVICE constexpr mk_u64 attentionChunkSharedFloats(mk_i64 headDim, mk_i64 group,
                                                           mk_i64 chunk, mk_i64 /*rotaryDim*/) {
  return static_cast<mk_u64>((group + 2) * headDim + group * chunk + 2 * group);
}

// The merge reads the partials straight from global memory.
MK_HOST_DEVICE constexpr mk_u64 attentionMergeSharedFloats(mk_i64, mk_i64) { return 0; }

} // namespace mk

#endif
