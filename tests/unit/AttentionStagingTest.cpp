// The attention chunk's staging ring as core/protocol/SharedMemory.h sizes
// it, which both the device function and the code generator read: over a
// sweep of head sizes, groups and chunk sizes, the blocks must tile the
// chunk, the rows hold a head in whole 16-byte copies with the bank padding
// the device's reads assume, the ring must keep a chunk's reads in flight
// within its budget, and the task's shared memory must be the carving plus
// the ring only where the ring is used.
#include "core/protocol/SharedMemory.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace mk;

constexpr mk_i64 kHeadDims[] = {6, 18, 32, 36, 64, 80, 96, 128, 192, 256};
constexpr mk_i64 kGroups[] = {1, 2, 3, 4, 6, 8};
constexpr mk_i64 kChunks[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

std::string shape(mk_i64 headDim, mk_i64 group, mk_i64 chunk) {
  return "head " + std::to_string(headDim) + ", group " + std::to_string(group) + ", chunk " +
         std::to_string(chunk);
}

TEST(AttentionStagingTest, BlocksTileTheChunkInWholeCopies) {
  for (mk_i64 headDim : kHeadDims)
    for (mk_i64 chunk : kChunks) {
      SCOPED_TRACE(shape(headDim, 1, chunk));
      mk_i64 rows = attentionBlockRows(headDim, chunk);
      EXPECT_GT(rows, 0);
      EXPECT_EQ(rows & (rows - 1), 0) << "a power of two";
      EXPECT_EQ(chunk % rows, 0) << "whole blocks (chunks are powers of two)";
      EXPECT_TRUE(rows * headDim * 4 <= 32 * 1024 || rows == 8);
      for (mk_i64 row : {attentionKeyRowFloats(headDim), attentionValueRowFloats(headDim)}) {
        EXPECT_GE(row, headDim);
        EXPECT_LT(row, headDim + 36) << "at most one bank cycle of padding";
        EXPECT_EQ(row % 4, 0) << "rows start 16-byte aligned";
        EXPECT_LE(rows * row, attentionSlotFloats(headDim, chunk));
      }
      // Keys are read 8 lanes a row and 4 rows a warp: 4 rows 8 banks apart.
      EXPECT_EQ(attentionKeyRowFloats(headDim) % 32, 8);
    }
}

TEST(AttentionStagingTest, ValueLanesCoverTheHeadOverTheWarps) {
  for (mk_i64 headDim : kHeadDims)
    for (mk_i64 warps : {15, 16}) {
      mk_i64 lanes = attentionValueLanes(headDim, warps);
      EXPECT_EQ(lanes & (lanes - 1), 0);
      EXPECT_GE(lanes * warps, headDim) << headDim;
      EXPECT_LT(lanes / 2 * warps, headDim) << "the fewest that cover it: " << headDim;
    }
}

TEST(AttentionStagingTest, RingKeepsReadsInFlightWithinItsBudget) {
  int staged = 0, unstaged = 0;
  for (mk_i64 headDim : kHeadDims)
    for (mk_i64 group : kGroups)
      for (mk_i64 chunk : kChunks) {
        SCOPED_TRACE(shape(headDim, group, chunk));
        const mk_i64 stages = attentionStages(headDim, group, chunk);
        const mk_i64 slotBytes = attentionSlotFloats(headDim, chunk) * 4;
        const mk_i64 carving = static_cast<mk_i64>(attentionStagingOffset(headDim, group, chunk));
        EXPECT_EQ(carving % 4, 0);
        EXPECT_GE(carving, (group + 2) * headDim + group * chunk + 2 * group);
        const mk_u64 floats = attentionChunkSharedFloats(headDim, group, chunk, 0);
        if (!attentionChunkStaged(headDim, group, chunk)) {
          ++unstaged;
          EXPECT_EQ(floats, static_cast<mk_u64>(carving)) << "no ring, no room for one";
          EXPECT_TRUE(chunk < 256 || stages < 2);
          continue;
        }
        ++staged;
        EXPECT_GE(chunk, 256);
        EXPECT_GE(stages, 2);
        EXPECT_LE(stages * slotBytes, 144 * 1024);
        EXPECT_LE(static_cast<mk_i64>(floats) * 4, 192 * 1024);
        EXPECT_EQ(floats, static_cast<mk_u64>(carving + stages * slotBytes / 4));
        // All but one slot in flight: 96 KiB of rows, or every block of the
        // chunk, unless the budget stops it first.
        const mk_i64 rows = attentionBlockRows(headDim, chunk);
        const mk_i64 inFlight = (stages - 1) * rows * headDim * 4;
        const mk_i64 wholeChunk = 2 * chunk * headDim * 4;
        const bool budgetBound = (stages + 1) * slotBytes > 144 * 1024 ||
                                 carving * 4 + (stages + 1) * slotBytes > 192 * 1024;
        EXPECT_TRUE(inFlight >= 96 * 1024 || inFlight >= wholeChunk || budgetBound);
      }
  EXPECT_GT(staged, 0);
  EXPECT_GT(unstaged, 0);
}

// The shapes measured on the H200 (bench/results/2026-12-02-h200-attention-ring):
// what they were measured with.
TEST(AttentionStagingTest, MeasuredShapes) {
  // Llama-3.2-1B built for 32800 positions: head 64, group 4, chunk 1024.
  EXPECT_TRUE(attentionChunkStaged(64, 4, 1024));
  EXPECT_EQ(attentionBlockRows(64, 1024), 128);
  EXPECT_EQ(attentionStages(64, 4, 1024), 4);
  // Qwen3-0.6B: head 128, group 2.
  EXPECT_EQ(attentionBlockRows(128, 1024), 64);
  EXPECT_EQ(attentionStages(128, 2, 1024), 4);
  // Builds for 528 positions: chunks of 32 or 64, the register path.
  EXPECT_FALSE(attentionChunkStaged(64, 4, 64));
  EXPECT_FALSE(attentionChunkStaged(64, 3, 32));
}

} // namespace
