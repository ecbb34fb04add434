// How a gemv task's rows are cut among the CTA's warps, and each warp's
// rows into batches of 16-byte chunks: one description read by the gemv's
// consumers (codegen/device/GemvTask.cuh, at compile time), the weight
// ring's producer (codegen/device/WeightRing.cuh, at run time, from the
// operation's record) and the code generator (the ring's slot size), so
// that all agree on which bytes a batch holds.
//
// Groups of `lanes` lanes take one output row each (rowsPerWarp rows per
// warp per pass, rowsPerPass per pass over the CTA); a lane takes every
// lanes-th chunk of its row, `batch` chunks at a time, batchesPerPass
// batches per row. A SiluMul output row reads two weight rows (gate and up).
#ifndef MKC_CORE_PROTOCOL_GEMVGEOMETRY_H
#define MKC_CORE_PROTOCOL_GEMVGEOMETRY_H

#include "core/protocol/Portable.h"

namespace mk {

// Lanes per row: enough 16-byte chunks for each lane to have one, at most a
// warp, a power of two so that groups tile warps.
MK_HOST_DEVICE constexpr int gemvLanesPerRow(int chunks) {
  int lanes = 1;
  while (lanes < 32 && lanes * 2 <= chunks)
    lanes *= 2;
  return lanes;
}

struct GemvGeometry {
  int chunks;         // 16-byte chunks of a row: input / 8 bf16
  int lanes;          // per output row
  int rowsPerWarp;    // output rows a warp takes per pass
  int warps;          // of the CTA's consumers
  int weightRows;     // weight rows per output row: 2 for SiluMul, else 1
  int perLane;        // chunks of a row per lane
  int batch;          // chunks per lane per batch, for each weight row
  int batchesPerPass; // batches per row

  MK_HOST_DEVICE constexpr int rowsPerPass() const { return warps * rowsPerWarp; }
  // The bytes of one weight row a batch covers (a lane's `batch` chunks, for
  // every lane of the group).
  MK_HOST_DEVICE constexpr int pieceBytes() const { return batch * lanes * 16; }
  // A warp's batch: every group's piece of each of its weight rows.
  MK_HOST_DEVICE constexpr int warpBatchBytes() const {
    return pieceBytes() * rowsPerWarp * weightRows;
  }
};

// `loadsInFlight` 16-byte loads per lane per batch, over all weight rows.
MK_HOST_DEVICE constexpr GemvGeometry gemvGeometry(int input, int weightRows, int threads,
                                                        int loadsInFlight) {
  GemvGeometry g{};
  g.chunks = input / 8;
  g.lanes = gemvLanesPerRow(g.chunks);
  g.rowsPerWarp = 32 / g.lanes;
  g.warps = threads / 32;
  g.weightRows = weightRows;
  g.perLane = (g.chunks + g.lanes - 1) / g.lanes;
  int wanted = loadsInFlight / weightRows > 0 ? loadsInFlight / weightRows : 1;
  g.batch = wanted < g.perLane ? wanted : g.perLane;
  g.batchesPerPass = (g.perLane + g.batch - 1) / g.batch;
  return g;
}

// A lane's batch over all its weight rows, in 16-byte chunks, and whether
// it holds fewer loads than a lane should keep in flight: such short rows
// cannot cover HBM's latency with one batch, and go through two stages of
// shared-memory copies (codegen/device/GemvTask.cuh; the code generator
// sizes the slots for them: codegen/KernelSource.cpp).
MK_HOST_DEVICE constexpr int gemvBatchChunks(const GemvGeometry &g) {
  return g.weightRows * g.batch;
}
MK_HOST_DEVICE constexpr bool gemvShortRows(const GemvGeometry &g, int loadsInFlight) {
  return gemvBatchChunks(g) < loadsInFlight;
}

// When a decode gemv issues its first batch of weights, which needs no
// input (KernelOptions::gemvFirstWeights, the kernel's kGemvFirstWeights):
// into registers once the input is in shared memory (and normalized);
// copied into shared memory before the task waits (cp.async); into
// registers as soon as the wait ends, under the input's load and norm; or
// into registers before the wait, in flight through it (the default).
// Rows too short for one batch to cover HBM's latency always go through
// two stages of copies.
constexpr int kGemvFirstAfterInput = 0;
constexpr int kGemvFirstCopied = 1;
constexpr int kGemvFirstAfterWait = 2;
constexpr int kGemvFirstBeforeWait = 3;

// A gemv of several rows a step (codegen/device/GemvRowsTask.cuh) holds a
// slice of every row's input in shared memory at a time: the whole input
// where all rows fit 32768 floats (128 KiB), else slices of whole rounds of
// the lanes' chunks (8 x lanes elements; lanes elements for rows not of
// whole 16-byte chunks, read as scalars), each lane's share of a slice the
// same. The Llama-3.2-1B shape at 8 rows: inputs of 2048 whole, down's
// 8192 in two slices of 4096.
MK_HOST_DEVICE constexpr int gemvRowsSliceUnit(int input) {
  return input % 8 == 0 ? 8 * gemvLanesPerRow(input / 8) : gemvLanesPerRow(input / 8);
}
MK_HOST_DEVICE constexpr long long gemvRowsSlice(long long input, long long rows) {
  constexpr long long kBudget = 32768;
  if (rows < 1 || input * rows <= kBudget)
    return input;
  long long unit = gemvRowsSliceUnit(static_cast<int>(input));
  long long units = kBudget / rows / unit;
  return (units > 0 ? units : 1) * unit;
}
// In shared memory each row's slice is followed by 4 floats of padding, so
// that the tensor-core path's 8 groups of lanes, one a row, read theirs on
// distinct banks; the same words then hold the warps' 16 x 8 partial sums
// (at most 16 warps of 128 floats) when the warps split a row's input.
// Then, where the gemv normalizes its input, the norm's weights of the
// slice (copied beside the rows, so that the rows are scaled in place from
// shared memory alone) and the rows' sums of squares, each cut over up to
// 16 warps; last, each row's inverse RMS.
constexpr long long kGemvRowsPad = 4;
constexpr long long kGemvRowsMaxWarps = 16;
constexpr long long kGemvRowsScratchFloats = kGemvRowsMaxWarps * 128;
MK_HOST_DEVICE constexpr long long gemvRowsStride(long long input, long long rows) {
  return gemvRowsSlice(input, rows) + kGemvRowsPad;
}
MK_HOST_DEVICE constexpr long long gemvRowsNormOffset(long long input, long long rows) {
  long long slices = rows * gemvRowsStride(input, rows);
  return slices > kGemvRowsScratchFloats ? slices : kGemvRowsScratchFloats;
}
// The partial sums of squares: a row over kGemvRowsMaxWarps / rows warps
// where there are more warps than rows, else a warp (or more) a row.
MK_HOST_DEVICE constexpr long long gemvRowsSquares(long long rows) {
  return rows > kGemvRowsMaxWarps ? rows : kGemvRowsMaxWarps;
}
MK_HOST_DEVICE constexpr long long gemvRowsSharedFloats(long long input, long long rows,
                                                        bool norm) {
  return gemvRowsNormOffset(input, rows) +
         (norm ? gemvRowsSlice(input, rows) + gemvRowsSquares(rows) : 0) + rows;
}
// Which path a gemv of several rows takes: tensor cores for 4 to 8 rows of
// whole 16-byte chunks (at 2 rows the CUDA cores measured faster on the
// H200: the 1B shape 1.36 ms a step against 1.44, SmolLM2-135M 0.92
// against 1.06; at 4 rows 2.11 against 1.81 on the 1B shape, 8 rows 3.86
// against 2.44: bench/results/2026-12-03-h200-batches).
MK_HOST_DEVICE constexpr bool gemvRowsOnTensorCores(long long input, long long rows) {
  return input % 8 == 0 && rows >= 4 && rows <= 8;
}
// There a warp loads kGemvRowsBatchSteps steps of 32 input elements of its
// 16 weight rows at a time, and where the input is one slice each warp's
// first batch is copied before the task waits into a stage of its own (16
// bytes of two rows a step for each of 32 lanes), 16-byte aligned past the
// rest.
constexpr long long kGemvRowsBatchSteps = 4;
MK_HOST_DEVICE constexpr long long gemvRowsStageOffset(long long input, long long rows,
                                                       bool norm) {
  return (gemvRowsSharedFloats(input, rows, norm) + 3) / 4 * 4;
}
MK_HOST_DEVICE constexpr long long gemvRowsStageFloats(long long input, long long rows) {
  return gemvRowsOnTensorCores(input, rows) && gemvRowsSlice(input, rows) == input
             ? kGemvRowsMaxWarps * kGemvRowsBatchSteps * 2 * 32 * 4
             : 0;
}
// All of it: what a gemv of several rows takes of shared memory.
MK_HOST_DEVICE constexpr long long gemvRowsTotalFloats(long long input, long long rows,
                                                       bool norm) {
  return gemvRowsStageFloats(input, rows) > 0
             ? gemvRowsStageOffset(input, rows, norm) + gemvRowsStageFloats(input, rows)
             : gemvRowsSharedFloats(input, rows, norm);
}

// The bytes of one pass of one warp: its rows, whole, for each weight row.
MK_HOST_DEVICE constexpr unsigned long long gemvWarpPassBytes(const GemvGeometry &g) {
  return static_cast<unsigned long long>(g.rowsPerWarp) * g.weightRows * g.chunks * 16;
}

// The weight ring's order (codegen/device/WeightRing.cuh): a slot holds one
// pass of `warpsPerSlot` consecutive warps, their rows whole, so that the
// slot's bytes are one contiguous run of rows per weight row (one bulk copy
// each, up to a slot's size: the copy engine's cost is per copy, and small
// copies starve it). Slots follow pass-major order over the warps that
// take the pass: warp w's first row is w * rowsPerWarp in each pass; a tile
// of `rows` rows has `fullPasses` passes every warp takes, then one that
// only the first `lastWarps` take.
struct GemvRingOrder {
  unsigned long long fullPasses;
  int lastWarps;
  int warps, warpsPerSlot;

  MK_HOST_DEVICE GemvRingOrder(const GemvGeometry &g, unsigned long long rows,
                               unsigned long long slotBytes)
      : fullPasses(rows / g.rowsPerPass()),
        lastWarps(static_cast<int>((rows % g.rowsPerPass() + g.rowsPerWarp - 1) / g.rowsPerWarp)),
        warps(g.warps), warpsPerSlot(1) {
    unsigned long long fit = slotBytes / gemvWarpPassBytes(g);
    warpsPerSlot = fit < 1 ? 1 : fit > static_cast<unsigned long long>(g.warps) ? g.warps
                                                                                 : static_cast<int>(fit);
  }

  MK_HOST_DEVICE unsigned long long passes() const { return fullPasses + (lastWarps > 0 ? 1 : 0); }
  // How many warps take pass `pass`, and in how many slots.
  MK_HOST_DEVICE int warpsAt(unsigned long long pass) const {
    return pass < fullPasses ? warps : lastWarps;
  }
  MK_HOST_DEVICE int slotsOf(int warpsInPass) const {
    return (warpsInPass + warpsPerSlot - 1) / warpsPerSlot;
  }
  // Slots the task takes from the ring.
  MK_HOST_DEVICE unsigned long long slots() const {
    return fullPasses * slotsOf(warps) + slotsOf(lastWarps);
  }
  // The place of warp `warp`'s pass `pass` among the task's slots.
  MK_HOST_DEVICE unsigned long long place(unsigned long long pass, int warp) const {
    return (pass < fullPasses ? pass : fullPasses) * slotsOf(warps) + warp / warpsPerSlot;
  }
};

// The slot size of a weight ring for gemvs of these inputs and epilogue
// rows: one warp's pass of the longest, at least 16 KiB (copies of that
// size keep the copy engine streaming), 128-byte aligned.
MK_HOST_DEVICE constexpr unsigned long long gemvRingSlotBytes(unsigned long long warpPassBytes) {
  unsigned long long bytes = warpPassBytes > 16384 ? warpPassBytes : 16384;
  return (bytes + 127) / 128 * 128;
}

} // namespace mk

#endif
