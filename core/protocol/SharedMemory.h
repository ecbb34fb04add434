// The dynamic shared memory each task kind's device function needs, in
// floats, as a function of its kernel variant's arguments (the template
// arguments of its instantiation, in order: core/taskgraph/TaskKind.h). The
// device functions carve their shared memory with these, the code generator
// sizes the kernel's dynamic shared memory with the largest, and the
// generated dispatcher static_asserts each instantiation against it.
#ifndef MKC_CORE_PROTOCOL_SHAREDMEMORY_H
#define MKC_CORE_PROTOCOL_SHAREDMEMORY_H

#include "core/protocol/GemvGeometry.h"
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
MK_HOST_DEVICE constexpr mk_u64 argmaxSharedFloats(mk_i64, mk_i64 = 1) {
  return MK_SAMPLING_SHARED_FLOATS;
}

// The whole input, normalized there when the gemv has a prologue norm. (The
// logits' picks, when it writes them, combine in a few static words.) A step
// of several rows: a slice of every row's input at a time, or the warps'
// partial sums, then the norm's, then the warps' stages of weights
// (gemvRowsTotalFloats, core/protocol/GemvGeometry.h).
MK_HOST_DEVICE constexpr mk_u64 gemvSharedFloats(mk_i64 input, mk_i64 /*epilogue*/,
                                                 mk_i64 norm, mk_i64 /*bias*/,
                                                 mk_i64 /*picks*/, mk_i64 /*fixed*/ = 0,
                                                 mk_i64 rows = 1) {
  return rows <= 1 ? static_cast<mk_u64>(input)
                   : static_cast<mk_u64>(gemvRowsTotalFloats(input, rows, norm != 0));
}

// A Gemv merging an attention's partials (MK_GEMV_MERGED_INPUT) copies the
// chunks in use of as many q heads as fit into the end of the tasks' shared
// memory, then merges them into its input: every head at once where all
// numChunks of every head fit kGemvMergeStagingLimit floats, else whole
// heads' chunks up to it, at least one head's (numChunks is at most 64, a
// head at most 256 dimensions: 66 KiB).
constexpr mk_u64 kGemvMergeStagingLimit = 16384;
MK_HOST_DEVICE constexpr mk_u64 gemvMergeStagingFloats(mk_i64 heads, mk_i64 chunks,
                                                       mk_i64 headDim) {
  const mk_u64 head = static_cast<mk_u64>(chunks) * static_cast<mk_u64>(headDim + 2);
  const mk_u64 all = static_cast<mk_u64>(heads) * head;
  return all <= kGemvMergeStagingLimit ? all
         : head >= kGemvMergeStagingLimit ? head
                                          : kGemvMergeStagingLimit / head * head;
}

// Mlp: the normalized input, then the slice's gated activations (at most
// `slice`, 4-float aligned so the down pass reads them as float4s).
MK_HOST_DEVICE constexpr mk_u64 mlpSharedFloats(mk_i64 input, mk_i64 /*output*/, mk_i64 slice,
                                                mk_i64 /*norm*/) {
  return (static_cast<mk_u64>(input) + 3) / 4 * 4 + static_cast<mk_u64>(slice);
}

// HeadProjection (codegen/device/HeadProjectionTask.cuh): the head's merged
// output (headDim floats, rounded up to 4), the chunk groups' partial sums
// of it (one float a consumer thread, at most
// MK_HEAD_PROJECTION_MOST_THREADS), then the head's partials of up to
// `chunks` chunks (headDim + 2 floats each), copied in.
#define MK_HEAD_PROJECTION_MOST_THREADS 1024
MK_HOST_DEVICE constexpr mk_u64 headProjectionSumsOffset(mk_i64 headDim) {
  return (static_cast<mk_u64>(headDim) + 3) / 4 * 4;
}
MK_HOST_DEVICE constexpr mk_u64 headProjectionStagingOffset(mk_i64 headDim) {
  return headProjectionSumsOffset(headDim) + MK_HEAD_PROJECTION_MOST_THREADS;
}
MK_HOST_DEVICE constexpr mk_u64 headProjectionSharedFloats(mk_i64 headDim, mk_i64 /*tileRows*/,
                                                           mk_i64 chunks) {
  return headProjectionStagingOffset(headDim) +
         static_cast<mk_u64>(chunks) * static_cast<mk_u64>(headDim + 2);
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
// Past those, to the end of the tasks' shared memory: a merged input's
// staging (gemvMergeStagingFloats, above).
MK_HOST_DEVICE constexpr mk_u64 gemvMergeStagingOffset(mk_i64 input, mk_i64 threads,
                                                      mk_i64 slots) {
  return (gemvSharedBytesWithEarlyWeights(input, threads, slots) + 15) / 16 * 16;
}

// The attention chunk's shared memory (codegen/device/AttentionChunkTask.cuh):
// the group's q heads, this step's k and v (q and k normed and rotated in
// place), the q heads' scores over the chunk, and per head the max score
// and the sum of exponentials, in that order; then, 16-byte aligned, the
// staging ring of a long chunk. `cacheBytes` is the size of a cache
// element (4: f32, 2: bf16, Buffer::element); staged rows keep the cache's
// elements as they are.
MK_HOST_DEVICE constexpr mk_u64 attentionStagingOffset(mk_i64 headDim, mk_i64 group,
                                                       mk_i64 chunk) {
  return static_cast<mk_u64>(((group + 2) * headDim + group * chunk + 2 * group + 3) / 4 * 4);
}

// A long chunk stages its keys and values in shared memory: blocks of cache
// rows copied without holding registers, keys first, then values, through
// a ring of `attentionStages` slots of which all but one are in flight. A
// chunk of 1024 positions loaded a round of registers at a time was
// latency-bound at a third of its SM's share of HBM; the ring keeps up to
// 96 KiB in flight. Chunks of up to 128 positions keep the register path:
// through the ring, steps whose spans were 32 positions measured 1-4% slower
// a token (bench/NOTES.md), and a short chunk's few rounds of loads are
// issued before the task waits anyway.
//
// Rows a block holds: up to 128 positions (two rounds of the scores' keys
// at 512 threads, which share their reads of q), fewer where the rows would
// pass 8192 elements, whatever the cache keeps: a thread holds its keys of a
// block in registers, and bf16 blocks of 128 rows of 128 spilled (the
// Qwen3-0.6B shape); a power of two for every staged chunk (256 positions
// or more), so that a whole number of the value lanes' strides fits.
MK_HOST_DEVICE constexpr mk_i64 attentionBlockRows(mk_i64 headDim, mk_i64 chunk) {
  mk_i64 rows = 128;
  while (rows > 8 && rows * headDim > 8 * 1024)
    rows /= 2;
  return rows < chunk ? rows : chunk;
}
// The lanes of a warp that share one dimension of o, each taking every
// such position: as many dimensions per warp as the head needs over the
// warps, rounded up to a power of two.
MK_HOST_DEVICE constexpr mk_i64 attentionValueLanes(mk_i64 headDim, mk_i64 warps) {
  mk_i64 perWarp = (headDim + warps - 1) / warps, lanes = 1;
  while (lanes < perWarp)
    lanes *= 2;
  return lanes;
}
// A staged row's elements: the head padded to whole 16-byte copies, its
// 4-byte words' remainder mod 32 banks that of `residue` elements (rounded
// up to a copy), so that the rows a warp reads together fall in different
// banks: keys are read 8 lanes a row, 4 rows a warp (residue 8); values by
// attentionValueLanes lanes a row at the megakernel's 16 warps. Only the
// speed depends on the padding.
MK_HOST_DEVICE constexpr mk_i64 attentionPaddedRow(mk_i64 headDim, mk_i64 residue,
                                                   mk_i64 cacheBytes) {
  mk_i64 unit = 16 / cacheBytes;
  mk_i64 row = (headDim + unit - 1) / unit * unit;
  mk_i64 want = (residue + unit - 1) / unit * unit * cacheBytes / 4 % 32;
  while (row * cacheBytes / 4 % 32 != want)
    row += unit;
  return row;
}
MK_HOST_DEVICE constexpr mk_i64 attentionKeyRow(mk_i64 headDim, mk_i64 cacheBytes) {
  return attentionPaddedRow(headDim, 8, cacheBytes);
}
MK_HOST_DEVICE constexpr mk_i64 attentionValueRow(mk_i64 headDim, mk_i64 cacheBytes) {
  return attentionPaddedRow(headDim, attentionValueLanes(headDim, 16), cacheBytes);
}
// A slot in floats (4-byte words): a block of key rows or of value rows.
MK_HOST_DEVICE constexpr mk_i64 attentionSlotFloats(mk_i64 headDim, mk_i64 chunk,
                                                    mk_i64 cacheBytes) {
  mk_i64 key = attentionKeyRow(headDim, cacheBytes), value = attentionValueRow(headDim, cacheBytes);
  return attentionBlockRows(headDim, chunk) * (key > value ? key : value) * cacheBytes /
         4;
}
// Slots in the ring: enough for 96 KiB of rows in flight besides the one
// being read, no more than a whole chunk's blocks of keys and values need
// (all of them in flight), and within 144 KiB and what leaves the task at
// most 192 KiB of shared memory in all (a CTA has 227 KiB on Hopper).
// Fewer than 2 (a chunk whose scores fill the shared memory): no ring.
MK_HOST_DEVICE constexpr mk_i64 attentionStages(mk_i64 headDim, mk_i64 group, mk_i64 chunk,
                                                mk_i64 cacheBytes) {
  mk_i64 rows = attentionBlockRows(headDim, chunk);
  mk_i64 blockBytes = rows * headDim * cacheBytes;
  mk_i64 stages = 1 + (96 * 1024 + blockBytes - 1) / blockBytes;
  mk_i64 whole = 2 * ((chunk + rows - 1) / rows) + 1;
  stages = stages < whole ? stages : whole;
  mk_i64 left = 192 * 1024 - static_cast<mk_i64>(attentionStagingOffset(headDim, group, chunk)) * 4;
  mk_i64 budget = left < 144 * 1024 ? left : 144 * 1024;
  mk_i64 fit = budget > 0 ? budget / (attentionSlotFloats(headDim, chunk, cacheBytes) * 4) : 0;
  return stages < fit ? stages : fit;
}
MK_HOST_DEVICE constexpr bool attentionChunkStaged(mk_i64 headDim, mk_i64 group, mk_i64 chunk,
                                                   mk_i64 cacheBytes) {
  return chunk >= 256 && attentionStages(headDim, group, chunk, cacheBytes) >= 2;
}

// One row's words: q, this step's k and v, the scores, m and l, then the
// staging ring where the chunk has one; 16-byte aligned, so that a batch's
// teams (below) each start on a 16-byte boundary.
MK_HOST_DEVICE constexpr mk_u64 attentionChunkTeamFloats(mk_i64 headDim, mk_i64 group,
                                                         mk_i64 chunk, mk_i64 cacheBytes) {
  return (attentionStagingOffset(headDim, group, chunk) +
          (attentionChunkStaged(headDim, group, chunk, cacheBytes)
               ? static_cast<mk_u64>(attentionStages(headDim, group, chunk, cacheBytes) *
                                     attentionSlotFloats(headDim, chunk, cacheBytes))
               : 0) +
          3) /
         4 * 4;
}
// A batch's rows a chunk task takes at once, a team of warps a row: a
// power of two up to the rows, each team keeping a warp per 32 dimensions
// of o (attentionValueLanes); one where the chunk stages its keys and
// values, whose ring is the whole CTA's, or where the warps do not split
// evenly (the weight ring's 15 consumers). The reservation below is for
// the kernel's 16 consumer warps, the most it has.
MK_HOST_DEVICE constexpr mk_i64 attentionChunkTeams(mk_i64 headDim, mk_i64 group, mk_i64 chunk,
                                                   mk_i64 cacheBytes, mk_i64 rows,
                                                   mk_i64 warps = 16) {
  mk_i64 teams = 1;
  if (attentionChunkStaged(headDim, group, chunk, cacheBytes))
    return teams;
  while (teams * 2 <= rows && teams * 2 <= 8 && warps % (teams * 2) == 0 &&
         attentionValueLanes(headDim, warps / (teams * 2)) <= 32)
    teams *= 2;
  return teams;
}
// A team of `teams` (more than one) copies its row's whole chunk of keys
// and values into its shared memory by cp.async before the task waits, all
// of it in flight at once, where every team's fits: a team has a fraction
// of the CTA's warps, and its keys and values through registers took
// several rounds of loads after the wait (the 1B shape's batch of 4 on an
// H100: chunk tasks of 10.3 us, staged 6.2; bench/NOTES.md). Rows padded as
// a team reads them: keys 8 lanes a row (attentionKeyRow), values
// attentionValueLanes lanes a row at the team's warps. At most 160 KiB for
// every team's words.
MK_HOST_DEVICE constexpr mk_i64 attentionTeamValueRow(mk_i64 headDim, mk_i64 cacheBytes,
                                                      mk_i64 teamWarps) {
  return attentionPaddedRow(headDim, attentionValueLanes(headDim, teamWarps), cacheBytes);
}
MK_HOST_DEVICE constexpr mk_u64 attentionTeamStagedFloats(mk_i64 headDim, mk_i64 chunk,
                                                          mk_i64 cacheBytes, mk_i64 teamWarps) {
  return static_cast<mk_u64>((chunk * (attentionKeyRow(headDim, cacheBytes) +
                                       attentionTeamValueRow(headDim, cacheBytes, teamWarps)) *
                                  cacheBytes / 4 +
                              3) /
                             4 * 4);
}
MK_HOST_DEVICE constexpr bool attentionTeamsStage(mk_i64 headDim, mk_i64 group, mk_i64 chunk,
                                                  mk_i64 cacheBytes, mk_i64 teams,
                                                  mk_i64 warps = 16) {
  constexpr mk_u64 kMostBytes = 160 * 1024;
  return teams > 1 &&
         static_cast<mk_u64>(teams) *
                 (attentionChunkTeamFloats(headDim, group, chunk, cacheBytes) +
                  attentionTeamStagedFloats(headDim, chunk, cacheBytes, warps / teams)) * 4 <=
             kMostBytes;
}
// A chunk of at most 64 positions, taken a row at a time by the whole CTA,
// runs as one warp a q head of the group (warpHeadsChunkRow,
// codegen/device/AttentionChunkWarpHeads.cuh): a lane a position (two past 32) for the scores and the
// softmax, a lane's consecutive dimensions (heads of whole 64s) for q, the
// rotation and o, so that no CTA barrier stands between the stages. Its
// words, past the row's: the chunk's keys, then its values, copied by
// cp.async before the wait, rows of the cache's elements padded by 16 bytes
// (8 lanes' 16-byte reads of 8 consecutive rows fall in distinct banks);
// then each warp's rounded k and v of this step, [group][2][headDim].
MK_HOST_DEVICE constexpr bool attentionChunkWarpHeads(mk_i64 headDim, mk_i64 group, mk_i64 chunk,
                                                      mk_i64 cacheBytes, mk_i64 warps = 16) {
  return chunk <= 64 && headDim % 64 == 0 && headDim <= 256 && group <= warps &&
         !attentionChunkStaged(headDim, group, chunk, cacheBytes);
}
MK_HOST_DEVICE constexpr mk_i64 attentionWarpHeadsRowBytes(mk_i64 headDim, mk_i64 cacheBytes) {
  return headDim * cacheBytes + 16;
}
MK_HOST_DEVICE constexpr mk_u64 attentionWarpHeadsFloats(mk_i64 headDim, mk_i64 group,
                                                         mk_i64 chunk, mk_i64 cacheBytes) {
  return static_cast<mk_u64>(
      (2 * chunk * attentionWarpHeadsRowBytes(headDim, cacheBytes) / 4 + 2 * group * headDim + 3) /
      4 * 4);
}
// A team's words: one row's (above), then its staged keys and values where
// the teams stage them, or a chunk's of few positions where one team takes
// the rows (attentionChunkWarpHeads).
MK_HOST_DEVICE constexpr mk_u64 attentionChunkTeamStride(mk_i64 headDim, mk_i64 group,
                                                         mk_i64 chunk, mk_i64 cacheBytes,
                                                         mk_i64 teams, mk_i64 warps = 16) {
  return attentionChunkTeamFloats(headDim, group, chunk, cacheBytes) +
         (attentionTeamsStage(headDim, group, chunk, cacheBytes, teams, warps)
              ? attentionTeamStagedFloats(headDim, chunk, cacheBytes, warps / teams)
          : teams == 1 && attentionChunkWarpHeads(headDim, group, chunk, cacheBytes, warps)
              ? attentionWarpHeadsFloats(headDim, group, chunk, cacheBytes)
              : 0);
}
MK_HOST_DEVICE constexpr mk_u64 attentionChunkSharedFloats(mk_i64 headDim, mk_i64 group,
                                                           mk_i64 chunk, mk_i64 /*rotaryDim*/,
                                                           mk_i64 cacheBytes, mk_i64 rows = 1) {
  const mk_i64 teams = attentionChunkTeams(headDim, group, chunk, cacheBytes, rows);
  return static_cast<mk_u64>(teams) *
         attentionChunkTeamStride(headDim, group, chunk, cacheBytes, teams);
}

// The merge reads the partials straight from global memory.
MK_HOST_DEVICE constexpr mk_u64 attentionMergeSharedFloats(mk_i64, mk_i64, mk_i64 = 1) {
  return 0;
}

} // namespace mk

#endif
