// AttentionChunk (g, c) (runtime/cpu/AttentionChunkTask.cpp): for each q
// head of group g, over the positions chunk c covers at this step
// ([c * span, (c + 1) * span) up to the step's own, span at most kChunk:
// core/protocol/AttentionLayout.h), the max m of the scores
// s = (q . k) * scale, l = sum exp(s - m) and o = sum exp(s - m) v. A chunk
// past the position is empty: m = -inf, l = 0, o = 0, stored without
// reading anything. Every chunk head-normalizes and rotates its group's q
// (and this step's k) itself, from the qkv gemv's output: a separate
// phase would cost the layer one more hop. Chunk 0 writes this step's k and
// v into the caches for later steps; the chunk holding the position takes
// them from shared memory.
//
// A chunk waits on its loads, not on arithmetic: a short one (up to 128
// positions) loads a round of keys or values into registers at a time, the
// first round before it waits for its inputs; a long one is bound by the
// bytes it keeps in flight, so it stages its keys and values in shared
// memory (StagingRing, AttentionStagingRing.cuh): blocks of cache rows
// copied by cp.async, which holds no register, all but one of the ring's
// slots in flight, the first blocks asked for before the task waits
// (core/protocol/SharedMemory.h draws the line and sizes the ring). A chunk
// of at most 64 positions, a row at a time by the whole CTA, waits on its
// barriers instead, so it runs one warp a q head (warpHeadsChunkRow,
// AttentionChunkWarpHeads.cuh), its rows copied into shared memory before
// the wait; the rest of this comment is the other paths'.
//
// Load: the first keys and values (a round, or the ring's first blocks) and
// each thread's rotary frequency; after the wait, the group's q, this
// step's k and v into shared memory.
// Compute: the head norms and rotary (cos and sin of the f32 angle
// pos * invFreq[i], as PyTorch computes them); then scores, kKeyLanes lanes
// per position (each lane every kKeyLanes-th dimension of the key, all q
// heads of the group against it); then one warp per head for m, the
// exponentials and l; then o. Registers: each warp owns a few dimensions
// and its lanes split the positions, every lane accumulating all heads of
// the group from each value it reads (the heads share v), and the lanes'
// sums meet through shuffles. Staged: each thread owns a head's 16-byte unit
// of the value rows and every few positions of a block, reading a whole
// unit at once (a fifth of the shared-memory reads a value of reading
// element by element), and the threads' sums meet in shared memory. Every
// sum has a fixed order, so every run gives the same bits.
// Store: chunk 0 this step's k and v; the partials [o, m, l] of each head.
// A bf16 cache (kCacheBytes 2) keeps the step's k and v rounded to bf16, and
// every chunk attends to the rounded values, the step's own included, as
// the CPU executor does.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONCHUNKTASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONCHUNKTASK_CUH

#include "codegen/device/AttentionChunkMma.cuh"
#include "codegen/device/AttentionChunkWarpHeads.cuh"
#include "codegen/device/AttentionHeads.cuh"
#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/AttentionStagingRing.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"
#include "core/protocol/SharedMemory.h"

namespace mk::gpu {

// The threads that take one step row of a chunk task: the whole CTA, or
// (kTeams > 1, a batch's rows at once) team `index` of kThreads of them,
// with a named barrier of its own (2 + index: 0 is __syncthreads', 1 the
// consumers') and its own words of shared memory.
template <int kThreads, int kTeams>
struct ChunkTeam {
  int index;
  float *shared;
  // The thread's index in the team: a mask where kThreads is a power of two
  // (the task asserts it), recomputed where used (held in a register through
  // the row, it made the 1B shape's batch kernels spill 120-212 bytes), and
  // unsigned, as threadIdx.x, so that the row's divisions by powers of two
  // stay shifts (signed ones changed the decode kernel's code).
  __device__ __forceinline__ unsigned thread() const {
    return kTeams == 1 ? threadIdx.x : threadIdx.x % kThreads;
  }
  __device__ __forceinline__ void sync() const {
    if constexpr (kTeams == 1) {
      consumerSync<kThreads>();
    } else {
#ifdef __CUDA_ARCH__
      asm volatile("bar.sync %0, %1;" ::"r"(2 + index), "n"(kThreads) : "memory");
#endif
    }
  }
};

// What a team's row hands its wait: the task's for the team's first row
// (every team takes it together); nothing for a later one, whose inputs
// that wait acquired (the team's barrier before it orders the rest).
template <class AwaitInputs>
struct FirstRowInputs {
  const AwaitInputs &awaitInputs;
  bool first;
  __device__ __forceinline__ bool operator()() const { return first ? awaitInputs() : true; }
};

template <int kHeadDim, int kGroup, int kChunk, int kRotaryDim, int kCacheBytes, int kThreads,
          int kTeams, class AwaitInputs>
__device__ bool attentionChunkRow(const TaskContext &context, const MkTaskRecord &task,
                                  const MkOperationRecord &op, const AwaitInputs &awaitInputs,
                                  const ChunkRow<typename BufferElementOf<kCacheBytes>::Type> row,
                                  const ChunkTeam<kThreads, kTeams> team) {
  using Layout = AttentionShape<kHeadDim, kGroup>;
  // The caches' elements: f32, or bf16 (read as f32, written rounded).
  using Element = BufferElementOf<kCacheBytes>;
  using Cache = typename Element::Type;
  // Chunks long enough to be bound by the bytes in flight stage their keys
  // and values in the ring; shorter ones load them into registers, a round
  // at a time (core/protocol/SharedMemory.h says where the line is).
  constexpr bool kStaged = attentionChunkStaged(kHeadDim, kGroup, kChunk, kCacheBytes);
  using Ring = StagingRing<kHeadDim, kGroup, kChunk, kCacheBytes, kThreads>;
  const AttentionLayout layout = Layout::of(op);
  constexpr int kWarps = kThreads / kWarpSize;
  // Staged chunks of bf16 caches: the passes on tensor cores where the
  // kernel asks for it (AttentionChunkMma.cuh).
  constexpr bool kMma = MK_CHUNK_TENSOR_CORES && kStaged &&
                        chunkOnTensorCores<kHeadDim, kGroup, kCacheBytes, Ring::kRows, kWarps>();
  // (Named by every chunk, used by kMma ones: any other takes a shape
  // that instantiates.)
  using Mma = ChunkMma<kMma ? kHeadDim : 16, kGroup, kChunk, Ring::kRows, kThreads>;
  Mma mma;
  // Scores: kKeyLanes lanes per key, kKeysPerPass keys per pass (a round of
  // loads, or a pass over part of a staged block).
  constexpr int kKeyLanes = 8;
  constexpr int kKeySlices = (kHeadDim + kKeyLanes - 1) / kKeyLanes;
  constexpr int kKeysPerWarp = kWarpSize / kKeyLanes;
  constexpr int kKeysPerPass = kWarps * kKeysPerWarp;
  constexpr int kKeyPasses = (kChunk + kKeysPerPass - 1) / kKeysPerPass;
  constexpr int kKeyPassesPerBlock = (Ring::kRows + kKeysPerPass - 1) / kKeysPerPass;
  // o: each warp owns kValueLanes dimensions, each dimension kValueSlices
  // lanes taking every kValueSlices-th position, kValueBatch values a round
  // (registers) or the positions of a block (staged).
  constexpr int kValueLanes = static_cast<int>(attentionValueLanes(kHeadDim, kWarps));
  constexpr int kValueSlices = kWarpSize / kValueLanes;
  constexpr int kValuesPerLane = (kChunk + kValueSlices - 1) / kValueSlices;
  constexpr int kValueBatch = kValuesPerLane < 8 ? kValuesPerLane : 8;
  constexpr int kValueBatches = (kValuesPerLane + kValueBatch - 1) / kValueBatch;
  static_assert(kThreads % kWarpSize == 0, "whole warps");
  static_assert(kTeams == 1 || !kStaged, "the staging ring is the whole CTA's");
  // A batch's team copies its whole chunk of keys and values into its
  // shared memory before the wait where every team's fits
  // (core/protocol/SharedMemory.h), and its rounds read them there.
  constexpr bool kTeamStaged =
      attentionTeamsStage(kHeadDim, kGroup, kChunk, kCacheBytes, kTeams, kWarps * kTeams);
  constexpr int kStagedKeyRow = static_cast<int>(attentionKeyRow(kHeadDim, kCacheBytes));
  constexpr int kStagedValueRow =
      static_cast<int>(attentionTeamValueRow(kHeadDim, kCacheBytes, kWarps));
  const unsigned tid = team.thread();
  static_assert(kValueLanes <= kWarpSize, "at most 32 dimensions of o per warp");

  unsigned long long group = task.begin, chunk = task.end;
  // Where the group's KV head keeps position t in the row's caches.
  auto cacheRow = [&](long long t) { return layout.cacheEntry(t, group, kKvCapacity); };
  const AttentionChunkPositions positions = attentionChunkPositions(
      row.position, op.window, static_cast<long long>(chunk), op.chunksPerRound, op.numChunks,
      kChunk);
  const long long first = positions.first, last = positions.last;
  // An idle row attends to nothing: its partials are an empty chunk's.
  int count = row.active && last > first ? static_cast<int>(last - first) : 0;
  float *queries = team.shared;                     // [kGroup][kHeadDim]
  float *newKey = queries + Layout::kGroupLength;   // [kHeadDim], right after q
  float *newValue = newKey + kHeadDim;              // [kHeadDim]
  float *scores = newValue + kHeadDim;              // [kGroup][kChunk]
  float *maxima = scores + kGroup * kChunk;         // [kGroup]
  float *sums = maxima + kGroup;                    // [kGroup]
  float *staging = team.shared + attentionStagingOffset(kHeadDim, kGroup, kChunk);
  Cache *stagedKeys = reinterpret_cast<Cache *>(
      team.shared + attentionChunkTeamFloats(kHeadDim, kGroup, kChunk, kCacheBytes));
  Cache *stagedValues = stagedKeys + kChunk * kStagedKeyRow; // [kChunk][kStagedValueRow]
  static_assert(Layout::kGroupLength + 2 * kHeadDim + kGroup * kChunk + 2 * kGroup <=
                        static_cast<int>(attentionStagingOffset(kHeadDim, kGroup, kChunk)) &&
                    attentionStagingOffset(kHeadDim, kGroup, kChunk) +
                            (kStaged ? Ring::kStages * Ring::kSlotFloats : 0) <=
                        attentionChunkTeamFloats(kHeadDim, kGroup, kChunk, kCacheBytes),
                "the carving above is what core/protocol/SharedMemory.h reserves");
  const long long position = row.position;
  const Cache *keys = row.keys;
  const Cache *values = row.values;
  float *partials = row.partials;
  int warp = tid / kWarpSize, lane = tid % kWarpSize;
  int keyLane = lane % kKeyLanes;
  int valueDim = warp * kValueLanes + lane % kValueLanes, valueSlice = lane / kValueLanes;

  // This step's k and v, normed and rotated: for the caches (chunk 0) and
  // for the chunk that holds the position. Chunk 0 always holds the
  // window's first position, so an empty chunk has none; the empty path
  // still checks.
  const bool holdsPosition = first <= position && position < first + count;
  const bool newEntries = row.active && (chunk == 0 || holdsPosition);
  const float *qkv = row.qkv;
  // Chunks of few positions: a warp a q head (attentionChunkWarpHeads).
  constexpr bool kWarpHeads =
      kTeams == 1 && attentionChunkWarpHeads(kHeadDim, kGroup, kChunk, kCacheBytes, kWarps) &&
      (kRotaryDim / 2) % (kHeadDim / kWarpSize) == 0;
  // Load, before the wait: the rotary frequency.
  const RotaryFrequency<kRotaryDim, kThreads, !kWarpHeads> frequency(context, op, tid);
  auto loadNewEntries = [&] {
    for (int i = tid; i < 2 * kHeadDim; i += kThreads)
      newKey[i] = i < kHeadDim ? qkv[layout.key(group) + i] : qkv[layout.value(group) + i - kHeadDim];
  };
  auto finishNewEntries = [&] {
    headRmsNorm<kHeadDim, kThreads>(context, newKey, 0, 1, op.kNorm, op.eps, tid);
    team.sync();
    rotateHeads<kHeadDim, kRotaryDim, kThreads>(context, op, newKey, 1, position, frequency, tid);
    team.sync();
    // Every chunk attends to what the cache keeps, this step's entry too.
    if constexpr (kCacheBytes != 4) {
      for (int i = tid; i < 2 * kHeadDim; i += kThreads)
        newKey[i] = Element::round(newKey[i]);
      team.sync();
    }
    if (chunk == 0)
      for (int i = tid; i < 2 * kHeadDim; i += kThreads)
        (i < kHeadDim ? row.keys : row.values)[cacheRow(position) + i % kHeadDim] =
            Element::write(newKey[i]);
  };

  // Store: an empty chunk's partials (count is the same for every thread).
  if (count == 0) {
    if (!awaitInputs())
      return false;
    if (newEntries) {
      loadNewEntries();
      team.sync();
      finishNewEntries();
    }
    for (int i = tid; i < kGroup * Layout::kPartialLength; i += kThreads) {
      int head = i / Layout::kPartialLength, j = i % Layout::kPartialLength;
      partials[layout.partial(group * kGroup + head, chunk) + j] =
          j == Layout::kMax ? negativeInfinity() : 0.0f;
    }
    return true;
  }

  // Position (in the chunk) of this lane's key in a pass, of its value k
  // (the register path's rounds).
  auto keyPosition = [&](int pass) { return pass * kKeysPerPass + tid / kKeyLanes; };
  auto valuePosition = [&](int k) { return valueSlice + k * kValueSlices; };
  // This step's own entry comes from shared memory once it is rotated, never
  // from the cache slot chunk 0 is writing: neither path reads that slot,
  // both read newKey and newValue instead.
  const int newSlot = holdsPosition ? static_cast<int>(position - first) : -1;
  static_assert(!kWarpHeads ||
                    attentionChunkTeamFloats(kHeadDim, kGroup, kChunk, kCacheBytes) +
                            attentionWarpHeadsFloats(kHeadDim, kGroup, kChunk, kCacheBytes) <=
                        attentionChunkTeamStride(kHeadDim, kGroup, kChunk, kCacheBytes, 1, kWarps),
                "the warp heads' words are what core/protocol/SharedMemory.h reserves");
  if constexpr (kWarpHeads)
    return warpHeadsChunkRow<kHeadDim, kGroup, kChunk, kRotaryDim, kCacheBytes, kThreads>(
        context, op, awaitInputs, row, team.shared, tid, group, chunk, first, count, newEntries,
        newSlot);
  auto fromCache = [&](int t) { return t < count && t != newSlot; };
  // Position t's key and value row: in the team's shared memory, or in the cache.
  auto keyRow = [&](int t) -> const Cache * {
    if constexpr (kTeamStaged)
      return stagedKeys + t * kStagedKeyRow;
    else
      return keys + cacheRow(first + t);
  };
  auto valueRow = [&](int t) -> const Cache * {
    if constexpr (kTeamStaged)
      return stagedValues + t * kStagedValueRow;
    else
      return values + cacheRow(first + t);
  };
  auto loadKey = [&](int pass, float (&slice)[kKeySlices]) {
    int t = keyPosition(pass);
    const Cache *cached = keyRow(t);
#pragma unroll
    for (int s = 0; s < kKeySlices; ++s) {
      int d = keyLane + s * kKeyLanes;
      slice[s] = t < count && d < kHeadDim ? (t == newSlot ? newKey[d] : Element::read(cached[d]))
                                           : 0.0f;
    }
  };
  auto loadValues = [&](int batch, float (&value)[kValueBatch]) {
#pragma unroll
    for (int k = 0; k < kValueBatch; ++k) {
      int t = valuePosition(batch * kValueBatch + k);
      value[k] = t < count && valueDim < kHeadDim
                     ? (t == newSlot
                            ? newValue[valueDim]
                            : Element::read(valueRow(t)[valueDim]))
                     : 0.0f;
    }
  };

  // Load: the first keys and values from the cache, before the inputs are
  // ready: earlier steps wrote them, and this CTA acquired those writes at
  // the end of the step before (this step's own entry comes after it is
  // rotated, below). Staged: the ring's first blocks; else the first round
  // into registers. Then q and this step's k and v.
  const Ring ring{staging,
                  keys + cacheRow(first),
                  values + cacheRow(first),
                  count,
                  newSlot,
                  (count + Ring::kRows - 1) / Ring::kRows};
  // A team has a fraction of the CTA's warps, so its keys and values take
  // several rounds of loads, each a round trip to HBM behind the sums of the
  // round before (the 1B shape's batch of 4: three of keys, three of values;
  // its chunk tasks took 14 us against one row's 4). The later rounds' rows
  // are asked into L1 with the first round's loads, so that each round
  // finds them there.
  auto prefetchLaterRounds = [&] {
    constexpr int kLineBytes = 128;
    constexpr int kLines = (kHeadDim * static_cast<int>(sizeof(Cache)) + kLineBytes - 1) / kLineBytes;
    const int rows = count * kLines;
    for (int item = tid; item < 2 * rows; item += kThreads) {
      const bool isValue = item >= rows;
      const int t = (isValue ? item - rows : item) / kLines, line = item % kLines;
      if (t < (isValue ? kValueBatch * kValueSlices : kKeysPerPass) || t == newSlot)
        continue;
      const Cache *row = (isValue ? values : keys) + cacheRow(first + t);
#ifdef __CUDA_ARCH__
      asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const char *>(row) +
                                                    line * kLineBytes));
#endif
    }
  };
  // A team's whole chunk into its shared memory: every row of keys and
  // values but this step's own, 16 bytes a copy (the caches' rows are whole
  // 16-byte units where a bf16 head is, and f32 heads of whole 4s), else 4.
  auto stageTeamRows = [&] {
    constexpr int kRowBytes = kHeadDim * kCacheBytes;
    constexpr int kCopyBytes = kRowBytes % 16 == 0 ? 16 : 4;
    static_assert(kCopyBytes == 16 || kCacheBytes == 4, "a bf16 head is whole 16-byte units");
    constexpr int kCopies = kRowBytes / kCopyBytes;
    for (int item = tid; item < 2 * count * kCopies; item += kThreads) {
      const bool isValue = item >= count * kCopies;
      const int t = (isValue ? item - count * kCopies : item) / kCopies, c = item % kCopies;
      if (t == newSlot)
        continue;
      const char *from = reinterpret_cast<const char *>((isValue ? values : keys) +
                                                        cacheRow(first + t)) +
                         c * kCopyBytes;
      char *into = reinterpret_cast<char *>(isValue ? stagedValues + t * kStagedValueRow
                                                    : stagedKeys + t * kStagedKeyRow) +
                   c * kCopyBytes;
      if constexpr (kCopyBytes == 16)
        copyAsync16(into, from, true);
      else
        copyAsync4(into, from);
    }
    copyCommit();
  };
  float key[kStaged ? 1 : kKeySlices], value[kStaged ? 1 : kValueBatch];
  if constexpr (kStaged) {
    ring.start();
  } else if constexpr (kTeamStaged) {
    stageTeamRows();
  } else {
    int t = keyPosition(0);
    const Cache *cached = keys + cacheRow(first + t);
#pragma unroll
    for (int s = 0; s < kKeySlices; ++s) {
      int d = keyLane + s * kKeyLanes;
      key[s] = fromCache(t) && d < kHeadDim ? Element::read(cached[d]) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kValueBatch; ++k) {
      int tv = valuePosition(k);
      value[k] = fromCache(tv) && valueDim < kHeadDim
                     ? Element::read(values[cacheRow(first + tv) + valueDim])
                     : 0.0f;
    }
    if constexpr (kTeams > 1)
      prefetchLaterRounds();
  }
  if (!awaitInputs()) {
    copyWait();
    return false;
  }
  for (int i = tid; i < Layout::kGroupLength; i += kThreads)
    queries[i] = qkv[layout.query(group) + i];
  if (newEntries)
    loadNewEntries();
  if constexpr (kTeamStaged)
    copyWait(); // the barrier below makes every thread's copies the team's
  team.sync();

  // Compute: q's head norms and rotary, and this step's k.
  headRmsNorm<kHeadDim, kThreads>(context, queries, 0, kGroup, op.qNorm, op.eps, tid);
  team.sync();
  rotateHeads<kHeadDim, kRotaryDim, kThreads>(context, op, queries, kGroup, position, frequency,
                                              tid);
  // Barriers order q's rotation before the scores: finishNewEntries's, or
  // (staged) the first block's in the ring.
  if (newEntries)
    finishNewEntries();
  else if constexpr (!kStaged)
    team.sync();

  // The block of a staged stream that holds this step's row, and its rows
  // in the chunk (the last block's may be fewer).
  auto ownRowOf = [&](int block) {
    const int row = newSlot - block * Ring::kRows;
    return newSlot >= 0 && row >= 0 && row < Ring::kRows ? row : -1;
  };
  auto rowsOf = [&](int block) { return min(Ring::kRows, count - block * Ring::kRows); };

  if constexpr (kMma) {
    // Compute: scores on tensor cores, block by block, this step's own key
    // written into its block first (behind a barrier of its own). A key row
    // past the chunk gives only scores that are never stored, so it stays
    // as the slot left it.
    for (int block = 0; block < ring.blocks; ++block) {
      Cache *slot = ring.await(block);
      if (ownRowOf(block) >= 0) {
        completeBlock<kHeadDim, Ring::kRows, kThreads>(slot, Ring::kKeyRow, ownRowOf(block),
                                                       newKey, Ring::kRows);
        team.sync();
      }
      if (block == 0) { // q's rotation is behind the first block's barrier
        Mma::splitQueries(queries, tid);
        team.sync();
      }
      mma.scoreBlock(slot, Ring::kKeyRow, block * Ring::kRows, count, op.scale, queries, scores);
    }
  } else if constexpr (kStaged) {
    // Compute: scores, block by block: a thread's key of each pass of the
    // block first, then each element of q read once for all of them (q's
    // reads from shared memory are most of the block's). A lane takes
    // kKeySlices consecutive dimensions of its key, read as whole 16-byte
    // units where they are, and q likewise as float4s. A warp's keys are
    // consecutive, so it skips a pass, or a block, as a whole.
    constexpr int kStagedUnit = 16 / kCacheBytes;
    constexpr bool kKeyUnits = kHeadDim % kKeyLanes == 0 && kKeySlices % kStagedUnit == 0;
    constexpr bool kQueryUnits = kHeadDim % kKeyLanes == 0 && kKeySlices % 4 == 0;
    auto stagedDim = [&](int s) { return keyLane * kKeySlices + s; };
    for (int block = 0; block < ring.blocks; ++block) {
      const Cache *slot = ring.await(block);
      float slice[kKeyPassesPerBlock][kKeySlices];
      bool active = false;
#pragma unroll
      for (int pass = 0; pass < kKeyPassesPerBlock; ++pass) {
        int warpRow = pass * kKeysPerPass + warp * kKeysPerWarp;
        bool warpActive = warpRow < Ring::kRows && block * Ring::kRows + warpRow < count;
        active |= warpActive;
        int row = keyPosition(pass), t = block * Ring::kRows + row;
        bool inside = warpActive && row < Ring::kRows && t < count;
        const Cache *staged = slot + row * Ring::kKeyRow;
        if (kKeyUnits && inside && t != newSlot) {
#pragma unroll
          for (int u = 0; u < kKeySlices / kStagedUnit; ++u) {
            float unit[kStagedUnit];
            readUnit<kCacheBytes, kStagedUnit>(staged + stagedDim(u * kStagedUnit), unit);
#pragma unroll
            for (int i = 0; i < kStagedUnit; ++i)
              slice[pass][u * kStagedUnit + i] = unit[i];
          }
        } else {
#pragma unroll
          for (int s = 0; s < kKeySlices; ++s) {
            int d = stagedDim(s);
            slice[pass][s] = inside && d < kHeadDim
                                 ? (t == newSlot ? newKey[d] : Element::read(staged[d]))
                                 : 0.0f;
          }
        }
      }
      if (!active)
        continue;
#pragma unroll
      for (int head = 0; head < kGroup; ++head) {
        float dot[kKeyPassesPerBlock];
#pragma unroll
        for (int pass = 0; pass < kKeyPassesPerBlock; ++pass)
          dot[pass] = 0.0f;
        if constexpr (kQueryUnits) {
#pragma unroll
          for (int s = 0; s < kKeySlices; s += 4) {
            float4 q = *reinterpret_cast<const float4 *>(queries + head * kHeadDim + stagedDim(s));
#pragma unroll
            for (int pass = 0; pass < kKeyPassesPerBlock; ++pass) {
              dot[pass] = fmaf(q.x, slice[pass][s], dot[pass]);
              dot[pass] = fmaf(q.y, slice[pass][s + 1], dot[pass]);
              dot[pass] = fmaf(q.z, slice[pass][s + 2], dot[pass]);
              dot[pass] = fmaf(q.w, slice[pass][s + 3], dot[pass]);
            }
          }
        } else {
#pragma unroll
          for (int s = 0; s < kKeySlices; ++s) {
            int d = stagedDim(s);
            if (kHeadDim % kKeyLanes == 0 || d < kHeadDim) {
              float q = queries[head * kHeadDim + d];
#pragma unroll
              for (int pass = 0; pass < kKeyPassesPerBlock; ++pass)
                dot[pass] = fmaf(q, slice[pass][s], dot[pass]);
            }
          }
        }
#pragma unroll
        for (int pass = 0; pass < kKeyPassesPerBlock; ++pass) {
          float sum = groupSum<kKeyLanes>(dot[pass]);
          int row = keyPosition(pass), t = block * Ring::kRows + row;
          if (keyLane == 0 && row < Ring::kRows && t < count)
            scores[head * kChunk + t] = sum * op.scale;
        }
      }
    }
  } else {
    // A staged team's first round, from its shared memory.
    if constexpr (kTeamStaged) {
      loadKey(0, key);
      loadValues(0, value);
    }
    // The first round's entry for this step's position, now rotated.
    int t = keyPosition(0);
    if (t == newSlot) {
#pragma unroll
      for (int s = 0; s < kKeySlices; ++s) {
        int d = keyLane + s * kKeyLanes;
        key[s] = d < kHeadDim ? newKey[d] : 0.0f;
      }
    }
#pragma unroll
    for (int k = 0; k < kValueBatch; ++k)
      if (valuePosition(k) == newSlot && valueDim < kHeadDim)
        value[k] = newValue[valueDim];

    // Compute: scores, a round of loads a pass. A warp's keys are
    // consecutive, so it stops as a whole.
    for (int pass = 0; pass < kKeyPasses; ++pass) {
      if (pass * kKeysPerPass + warp * kKeysPerWarp >= count)
        break;
      if (pass > 0)
        loadKey(pass, key);
      int t = keyPosition(pass);
#pragma unroll
      for (int head = 0; head < kGroup; ++head) {
        float dot = 0.0f;
#pragma unroll
        for (int s = 0; s < kKeySlices; ++s) {
          int d = keyLane + s * kKeyLanes;
          if (kHeadDim % kKeyLanes == 0 || d < kHeadDim)
            dot = fmaf(queries[head * kHeadDim + d], key[s], dot);
        }
        dot = groupSum<kKeyLanes>(dot);
        if (keyLane == 0 && t < count)
          scores[head * kChunk + t] = dot * op.scale;
      }
    }
  }
  team.sync();

  // Compute: per head, the max, the weights exp(s - m) in place, their sum.
  for (int head = warp; head < kGroup; head += kWarps) {
    float *headScores = scores + head * kChunk;
    float max = negativeInfinity();
    for (int t = lane; t < count; t += kWarpSize)
      max = fmaxf(max, headScores[t]);
    max = warpMax(max);
    float sum = 0.0f;
    for (int t = lane; t < count; t += kWarpSize) {
      float weight = expf(headScores[t] - max);
      headScores[t] = weight;
      sum += weight;
    }
    sum = warpSum(sum);
    if (lane == 0) {
      maxima[head] = max;
      sums[head] = sum;
    }
  }
  // The weights before o: here, or (staged) the first value block's barrier.
  if constexpr (!kStaged)
    team.sync();

  if constexpr (kMma) {
    // Compute and store: o on tensor cores, block by block; the warps'
    // slices then meet in shared memory (the ring's, free once the last
    // block is read), added in slice order.
    static_assert(Mma::kSlices * kGroup * kHeadDim <= Ring::kStages * Ring::kSlotFloats,
                  "the slices' sums fit the ring");
    mma.startValues();
    for (int block = 0; block < ring.blocks; ++block) {
      Cache *slot = ring.await(ring.blocks + block);
      if (ownRowOf(block) >= 0 || rowsOf(block) < Ring::kRows) {
        completeBlock<kHeadDim, Ring::kRows, kThreads>(slot, Ring::kValueRow, ownRowOf(block),
                                                       newValue, rowsOf(block));
        team.sync();
      }
      mma.accumulateBlock(slot, Ring::kValueRow, block * Ring::kRows, count, scores);
    }
    team.sync(); // every warp is done with the ring
    mma.storeSlices(staging);
    team.sync();
    for (int i = tid; i < kGroup * kHeadDim; i += kThreads) {
      float total = 0.0f;
      for (int slice = 0; slice < Mma::kSlices; ++slice)
        total += staging[slice * kGroup * kHeadDim + i];
      partials[layout.partial(group * kGroup + i / kHeadDim, chunk) + i % kHeadDim] = total;
    }
  } else if constexpr (kStaged) {
    // Compute and store: o, staged. Each thread owns one head and one
    // 16-byte unit of a value row (kUnitElements dimensions) and takes every
    // kSlots-th position of each block: per position one 16-byte read that
    // the group's heads share and one read of the head's weight, against
    // kUnitElements multiply-adds. The slots' sums then meet in shared
    // memory (the ring's, free once the last block is read), added in slot
    // order, so every run gives the same bits.
    constexpr int kUnitElements = Ring::kUnitElements, kUnitsPerRow = Ring::kUnitsPerRow;
    constexpr int kOwners = kGroup * kUnitsPerRow;
    // More owners than threads (a large group of f32 heads not of whole
    // units): each thread owns several, every position its own.
    constexpr int kOwnerRounds = (kOwners + kThreads - 1) / kThreads;
    constexpr int kSlots = kOwnerRounds > 1 ? 1 : kThreads / kOwners;
    static_assert(kSlots * kGroup * kHeadDim <= Ring::kStages * Ring::kSlotFloats,
                  "the slots' sums fit the ring");
    const int positionSlot = kOwnerRounds > 1 ? 0 : tid / kOwners;
    auto ownerOf = [&](int round) {
      return kOwnerRounds > 1 ? tid + round * kThreads : tid % kOwners;
    };
    float sum[kOwnerRounds][kUnitElements];
#pragma unroll
    for (int round = 0; round < kOwnerRounds; ++round)
#pragma unroll
      for (int i = 0; i < kUnitElements; ++i)
        sum[round][i] = 0.0f;
    for (int block = 0; block < ring.blocks; ++block) {
      const Cache *slot = ring.await(ring.blocks + block);
      if (positionSlot >= kSlots)
        continue;
      const int rows = min(Ring::kRows, count - block * Ring::kRows);
#pragma unroll
      for (int round = 0; round < kOwnerRounds; ++round) {
        const int owner = ownerOf(round);
        if (owner >= kOwners)
          break;
        const int head = owner / kUnitsPerRow, firstDim = (owner % kUnitsPerRow) * kUnitElements;
        for (int row = positionSlot; row < rows; row += kSlots) {
          const int t = block * Ring::kRows + row;
          const float weight = scores[head * kChunk + t];
          float value[kUnitElements];
          if (t == newSlot) {
#pragma unroll
            for (int i = 0; i < kUnitElements; ++i)
              value[i] = newValue[firstDim + i];
          } else {
            readUnit<kCacheBytes, kUnitElements>(slot + row * Ring::kValueRow + firstDim, value);
          }
#pragma unroll
          for (int i = 0; i < kUnitElements; ++i)
            sum[round][i] = fmaf(weight, value[i], sum[round][i]);
        }
      }
    }
    team.sync(); // every thread is done with the ring
    if (positionSlot < kSlots) {
#pragma unroll
      for (int round = 0; round < kOwnerRounds; ++round) {
        const int owner = ownerOf(round);
        if (owner >= kOwners)
          break;
        // Owner o's unit is dimensions [o * kUnitElements, ...) of the group's heads.
#pragma unroll
        for (int i = 0; i < kUnitElements; ++i)
          staging[positionSlot * kGroup * kHeadDim + owner * kUnitElements + i] = sum[round][i];
      }
    }
    team.sync();
    for (int i = tid; i < kGroup * kHeadDim; i += kThreads) {
      float total = 0.0f;
      for (int slotIndex = 0; slotIndex < kSlots; ++slotIndex)
        total += staging[slotIndex * kGroup * kHeadDim + i];
      partials[layout.partial(group * kGroup + i / kHeadDim, chunk) + i % kHeadDim] = total;
    }
  } else {
    // Compute and store: o, by warps that own a dimension (whole warps, for
    // the shuffles); then m and l. A lane's positions run valueSlice,
    // + kValueSlices, ... .
    float weighted[kGroup];
#pragma unroll
    for (int head = 0; head < kGroup; ++head)
      weighted[head] = 0.0f;
    const bool ownsDimension = warp * kValueLanes < kHeadDim;
    if (ownsDimension) {
      for (int batch = 0; batch < kValueBatches; ++batch) {
        if (batch * kValueBatch * kValueSlices >= count)
          break;
        if (batch > 0)
          loadValues(batch, value);
#pragma unroll
        for (int k = 0; k < kValueBatch; ++k) {
          int t = valuePosition(batch * kValueBatch + k);
          if (t < count) {
#pragma unroll
            for (int head = 0; head < kGroup; ++head)
              weighted[head] = fmaf(scores[head * kChunk + t], value[k], weighted[head]);
          }
        }
      }
#pragma unroll
      for (int head = 0; head < kGroup; ++head) {
        float total = sumOverStride<kValueLanes>(weighted[head]);
        if (valueSlice == 0 && valueDim < kHeadDim)
          partials[layout.partial(group * kGroup + head, chunk) + valueDim] = total;
      }
    }
  }
  for (int head = tid; head < kGroup; head += kThreads) {
    float *partial = partials + layout.partial(group * kGroup + head, chunk);
    partial[Layout::kMax] = maxima[head];
    partial[Layout::kSum] = sums[head];
  }
  return true;
}

// The task: its chunk for each row of the step (a batch's rows are
// sequences of their own, each attending to its own slots at its own
// position). Where the chunk's keys and values come through registers, the
// rows go kTeams at a time, a team of warps a row with its own barrier and
// shared memory (core/protocol/SharedMemory.h's attentionChunkTeams); else
// one after another. A team's first row's loads go before the wait, which
// every team takes together; a later row's after it, behind the team's
// barrier, since a row's shared memory is the next one's.
template <int kHeadDim, int kGroup, int kChunk, int kRotaryDim, int kCacheBytes, int kStepRows,
          int kThreads, class AwaitInputs>
__device__ void attentionChunkTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  using Cache = typename BufferElementOf<kCacheBytes>::Type;
  using Layout = AttentionShape<kHeadDim, kGroup>;
  constexpr int kTeams = static_cast<int>(
      attentionChunkTeams(kHeadDim, kGroup, kChunk, kCacheBytes, kStepRows, kThreads / kWarpSize));
  constexpr int kTeamThreads = kThreads / kTeams;
  static_assert(kTeams == 1 || (kThreads % (kTeams * kWarpSize) == 0 && kTeams <= 8 &&
                                 (kTeamThreads & (kTeamThreads - 1)) == 0),
                "whole warps a team, a power of two of threads, a named barrier each (2 to 9)");
  // What SharedMemory.h reserves is the teams of 16 consumer warps; with
  // fewer (the weight ring's 15) the teams are fewer, within it.
  constexpr unsigned long long kTeamFloats = attentionChunkTeamStride(
      kHeadDim, kGroup, kChunk, kCacheBytes, kTeams, kThreads / kWarpSize);
  static_assert(kTeams * kTeamFloats <=
                    attentionChunkSharedFloats(kHeadDim, kGroup, kChunk, kRotaryDim, kCacheBytes,
                                               kStepRows),
                "the teams' words fit what core/protocol/SharedMemory.h reserves");
  const AttentionLayout layout = Layout::of(op);
  // (Cache offsets count f32 elements of the KV arena, whatever the cache
  // keeps: runtime/format/ScheduleBlobBuilder.h.)
  Cache *keys = reinterpret_cast<Cache *>(context.kv + op.keyCache);
  Cache *values = reinterpret_cast<Cache *>(context.kv + op.valueCache);
  const unsigned long long qkvRow = (layout.numHeads + 2 * layout.numKvHeads) * kHeadDim;
  const unsigned long long partialsRow = layout.numHeads * layout.numChunks * Layout::kPartialLength;
  // (One team: index 0 as a constant, so that a step of one row compiles to
  // the loop it was before teams.)
  const int teamIndex = kTeams == 1 ? 0 : static_cast<int>(threadIdx.x) / kTeamThreads;
  const ChunkTeam<kTeamThreads, kTeams> team{teamIndex, context.shared + teamIndex * kTeamFloats};
#pragma unroll 1
  for (int r = teamIndex; r < kStepRows; r += kTeams) {
    const StepRow step = stepRow<kStepRows>(context, r);
    const unsigned long long slots = kStepRows == 1 ? 0 : step.sequence * sequenceSlots(context, op);
    const ChunkRow<Cache> row{step.position,
                              step.active,
                              context.activations + op.input + r * qkvRow,
                              keys + slots,
                              values + slots,
                              context.activations + op.partials + r * partialsRow};
    if constexpr (kTeams == 1) {
      // Rows one after another, the whole CTA each.
      if (r > 0)
        consumerSync<kThreads>();
      if (!attentionChunkRow<kHeadDim, kGroup, kChunk, kRotaryDim, kCacheBytes, kThreads, 1>(
              context, task, op, RowInputs<AwaitInputs, kThreads>{awaitInputs, r}, row, team))
        return;
    } else {
      const bool first = r < kTeams; // the team's first row: its inputs are the task's wait
      if (!first)
        team.sync();
      if (!attentionChunkRow<kHeadDim, kGroup, kChunk, kRotaryDim, kCacheBytes, kTeamThreads,
                             kTeams>(context, task, op,
                                     FirstRowInputs<AwaitInputs>{awaitInputs, first}, row, team))
        return;
    }
  }
}

} // namespace mk::gpu

#endif
