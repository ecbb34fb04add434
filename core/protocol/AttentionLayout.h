// Where the tasks of one attention operation find their data, for every
// engine: the task kinds' footprints (core/taskgraph/kinds/), the CPU
// executor (runtime/cpu/) and the megakernel (codegen/device/).
//
//   q | k | v input   [numHeads | numKvHeads | numKvHeads] x headDim; the q
//                     heads of KV head g are [g * group, (g + 1) * group)
//   KV caches         [numKvHeads][maxContext][headDim] a sequence (cacheEntry);
//                     a task's footprint names a position's slot, its heads
//   partials          [numHeads][numChunks][headDim + 2]: one chunk's o
//                     (headDim), then its max score and its sum of exponentials
//   head tiles        a HeadProjection task's tile names one q head h and
//                     rows [r0, r1) of its operation's output as
//                     begin = h << MK_HEAD_TILE_ROW_BITS | r0 and end = h <<
//                     MK_HEAD_TILE_ROW_BITS | r1 (the schedule's records keep
//                     32 bits: at most 256 heads, outputs under 2^24 rows)
//   chunks            at a step at position p, chunk c covers the positions
//                     [s + c * span, min(s + (c + 1) * span, p + 1)), s =
//                     attentionWindowStart(p, window) (0 without a sliding
//                     window), span = attentionSpan(p - s, ...): the positions
//                     the step attends to split evenly over the chunks of one
//                     round of tasks over the SMs, so that the work follows
//                     the position, not the compiled context; the chunks past
//                     p are empty (attentionChunkPositions)
//
// All offsets count elements from the start of their buffer. The device
// builds the layout with headDim and group as compile-time constants, so
// every offset folds to the same arithmetic it would write by hand.
#ifndef MKC_CORE_PROTOCOL_ATTENTIONLAYOUT_H
#define MKC_CORE_PROTOCOL_ATTENTIONLAYOUT_H

#include "core/protocol/Portable.h"

#define MK_HEAD_TILE_ROW_BITS 24
#define MK_HEAD_TILE_MOST_HEADS 256

namespace mk {

// A HeadProjection tile's bound (its task's begin or end, above): the q
// head, the row, and the bound of a head and a row. Every engine, the
// lowering and the validator read tiles through these, in the width they
// hold the bound in (the device: the record's 32 bits).
template <class Bound>
MK_HOST_DEVICE constexpr Bound headTileHead(Bound bound) {
  return bound >> MK_HEAD_TILE_ROW_BITS;
}
template <class Bound>
MK_HOST_DEVICE constexpr Bound headTileRow(Bound bound) {
  return bound & ((Bound(1) << MK_HEAD_TILE_ROW_BITS) - 1);
}
MK_HOST_DEVICE constexpr mk_u64 headTileBound(mk_u64 head, mk_u64 row) {
  return head << MK_HEAD_TILE_ROW_BITS | row;
}

struct AttentionLayout {
  mk_u64 numHeads, numKvHeads, headDim, group, numChunks; // group: q heads per KV head

  // The q heads of KV head `kvHead` in a q-sized buffer (q, roped q, output).
  MK_HOST_DEVICE constexpr mk_u64 groupLength() const { return group * headDim; }
  MK_HOST_DEVICE constexpr mk_u64 query(mk_u64 kvHead) const { return kvHead * groupLength(); }
  // Head `kvHead` of the k and of the v section of q | k | v.
  MK_HOST_DEVICE constexpr mk_u64 key(mk_u64 kvHead) const { return (numHeads + kvHead) * headDim; }
  MK_HOST_DEVICE constexpr mk_u64 value(mk_u64 kvHead) const {
    return (numHeads + numKvHeads + kvHead) * headDim;
  }
  // Head `kvHead` within one position's slot of a cache (the slot a task's
  // footprint names: core/taskgraph/kinds/AttentionChunkKind.cpp).
  MK_HOST_DEVICE constexpr mk_u64 slot(mk_u64 kvHead) const { return kvHead * headDim; }
  // Position `position` of head `kvHead` from the start of a sequence's
  // slots, `capacity` positions of every head: the caches are head-major,
  // [KV head][position][head dim], so that a chunk of one head reads one
  // contiguous run (1-2% faster at 32700 positions than a position's heads
  // side by side: bench/NOTES.md, item 28).
  MK_HOST_DEVICE constexpr mk_u64 cacheEntry(mk_i64 position, mk_u64 kvHead,
                                             mk_u64 capacity) const {
    return (kvHead * capacity + static_cast<mk_u64>(position)) * headDim;
  }
  // One chunk's partial result for q head `head`: o, then max, then sum.
  MK_HOST_DEVICE constexpr mk_u64 partialLength() const { return headDim + 2; }
  MK_HOST_DEVICE constexpr mk_u64 partialMax() const { return headDim; }
  MK_HOST_DEVICE constexpr mk_u64 partialSum() const { return headDim + 1; }
  MK_HOST_DEVICE constexpr mk_u64 partial(mk_u64 head, mk_u64 chunk) const {
    return (head * numChunks + chunk) * partialLength();
  }
  // Every chunk's partials of the q heads of KV head `kvHead`, contiguous.
  MK_HOST_DEVICE constexpr mk_u64 groupPartialsLength() const {
    return group * numChunks * partialLength();
  }
  MK_HOST_DEVICE constexpr mk_u64 groupPartials(mk_u64 kvHead) const {
    return kvHead * groupPartialsLength();
  }
};

// The attention merge's tiles: elements [begin, end) of the attention's
// output, [numHeads][headDim]. A queued merge takes at most
// kMergeTileElements of one q head's dimensions, so that the device spreads
// each element's chunks over several threads (codegen/device/
// AttentionMergeTask.cuh) and an operation's merges spread over the SMs: a
// merge a KV head took 13 us of the Qwen2.5-1.5B shape's 25 us attention at
// 4096 (2 KV heads, 63 chunks: each thread's (head, dimension) read them
// in 12 rounds to L2). An inline merge (Task::runsInline) takes its whole
// KV head's q heads, as the one task its event runs.
#define MK_MERGE_TILE_ELEMENTS 64

// Positions per chunk at a step at `position`. The positions up to it split
// evenly over the chunks of one round of tasks over the SMs (the
// operation's chunksPerRound, at most numChunks) while that fits the
// compiled chunk size, which bounds a chunk's scores in shared memory: a
// step then needs one round of chunk tasks. Past that, over all numChunks
// chunks, at most chunkSize each (numChunks * chunkSize covers the compiled
// context), as evenly as that allows. An even span is rounded up to a
// multiple of kAttentionSpanGrain (whole rounds of the device's key loads)
// and is at least kShortestSpan.
//
// Measured on the H200 (2026-12-02, the 1B shape built for 32800: 33
// chunks of 1024, 16 a round): spread over all 33 chunks, position 512 took
// 17 chunks a KV head, 136 tasks for 132 SMs in two rounds (1.033 ms a
// token; spread over one round's 16, 0.976); spread over one round past its
// reach, position 32736 took 32 chunks of 1024 where 33 of 1008 do (+1.2%).
// The shortest span keeps the merge short at small positions: a chunk of 32
// positions costs about what one of 16 does (measured, 2026-12-01).
//
// The divisions are 32-bit: a 64-bit one is a called subroutine on the GPU,
// and every chunk and merge task computes its span before its first load.
// Positions and chunk counts are below 2^31 (the validator's bound on
// maxContext), so ceil((position + 1) / d) = position / d + 1 fits.
constexpr mk_i64 kAttentionSpanGrain = 16;
constexpr mk_i64 kShortestSpan = 32;

// ceil((position + 1) / divisor) for position in [0, 2^31), divisor in [1, 2^32).
MK_HOST_DEVICE constexpr mk_i64 attentionCeilDiv(mk_i64 position, mk_i64 divisor) {
  return static_cast<mk_i64>(static_cast<mk_u32>(position) / static_cast<mk_u32>(divisor)) + 1;
}

// (position + 1) / chunks, rounded up to the grain, at least the shortest.
MK_HOST_DEVICE constexpr mk_i64 attentionEvenSpan(mk_i64 position, mk_i64 chunks) {
  mk_i64 even = attentionCeilDiv(position, chunks);
  mk_i64 span = (even + kAttentionSpanGrain - 1) / kAttentionSpanGrain * kAttentionSpanGrain;
  return span > kShortestSpan ? span : kShortestSpan;
}

MK_HOST_DEVICE constexpr mk_i64 attentionSpan(mk_i64 position, mk_i64 chunksPerRound,
                                              mk_i64 numChunks, mk_i64 chunkSize) {
  mk_i64 oneRound = attentionEvenSpan(position, chunksPerRound);
  if (oneRound <= chunkSize)
    return oneRound;
  mk_i64 span = attentionEvenSpan(position, numChunks);
  return span < chunkSize ? span : chunkSize;
}

// The chunks holding a position at a step at `position`: the merge reads these.
MK_HOST_DEVICE constexpr mk_i64 attentionChunksInUse(mk_i64 position, mk_i64 chunksPerRound,
                                                     mk_i64 numChunks, mk_i64 chunkSize) {
  return attentionCeilDiv(position, attentionSpan(position, chunksPerRound, numChunks, chunkSize));
}

// The oldest position a step at `position` attends to: 0, or with a
// sliding window of `window` positions (0: none) the oldest it keeps.
MK_HOST_DEVICE constexpr mk_i64 attentionWindowStart(mk_i64 position, mk_i64 window) {
  return window > 0 && position >= window ? position + 1 - window : 0;
}

// The positions [first, last) of chunk `chunk` at a step at `position`: the
// window's positions, split as attentionSpan splits positions 0..position
// without one. Empty (last <= first) past the chunks in use.
struct AttentionChunkPositions {
  mk_i64 first, last;
};

MK_HOST_DEVICE constexpr AttentionChunkPositions
attentionChunkPositions(mk_i64 position, mk_i64 window, mk_i64 chunk, mk_i64 chunksPerRound,
                        mk_i64 numChunks, mk_i64 chunkSize) {
  mk_i64 start = attentionWindowStart(position, window);
  mk_i64 span = attentionSpan(position - start, chunksPerRound, numChunks, chunkSize);
  mk_i64 first = start + chunk * span;
  mk_i64 last = first + span < position + 1 ? first + span : position + 1;
  return {first, last};
}

// The chunks holding a position at a step at `position` with a window.
MK_HOST_DEVICE constexpr mk_i64 attentionWindowChunksInUse(mk_i64 position, mk_i64 window,
                                                           mk_i64 chunksPerRound,
                                                           mk_i64 numChunks, mk_i64 chunkSize) {
  return attentionChunksInUse(position - attentionWindowStart(position, window), chunksPerRound,
                              numChunks, chunkSize);
}

// The most positions one step attends to: the compiled context, or a
// shorter window. The operation's chunks cover this many.
MK_HOST_DEVICE constexpr mk_i64 attentionReach(mk_i64 maxContext, mk_i64 window) {
  return window > 0 && window < maxContext ? window : maxContext;
}

} // namespace mk

#endif
