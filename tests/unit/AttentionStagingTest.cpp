// The attention chunk's staging ring as core/protocol/SharedMemory.h sizes
// it, which both the device function and the code generator read: over a
// sweep of head sizes, groups, chunk sizes and both cache elements (f32, bf16), the blocks must tile the
// chunk, the rows hold a head in whole 16-byte copies with the bank padding
// the device's reads assume, the ring must keep a chunk's reads in flight
// within its budget, and the task's shared memory must be the carving plus
// the ring only where the ring is used.
#include "core/protocol/SharedMemory.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <string>

namespace {

using namespace mk;

constexpr mk_i64 kHeadDims[] = {6, 18, 32, 36, 64, 80, 96, 128, 192, 256};
constexpr mk_i64 kGroups[] = {1, 2, 3, 4, 6, 8};
constexpr mk_i64 kChunks[] = {32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
// f32 caches, and bf16 ones (whose head dimensions the compiler keeps to
// multiples of 8: whole 16-byte copies).
constexpr mk_i64 kCacheBytes[] = {4, 2};

bool cacheHolds(mk_i64 headDim, mk_i64 cacheBytes) { return cacheBytes == 4 || headDim % 8 == 0; }

std::string shape(mk_i64 headDim, mk_i64 group, mk_i64 chunk, mk_i64 cacheBytes) {
  return "head " + std::to_string(headDim) + ", group " + std::to_string(group) + ", chunk " +
         std::to_string(chunk) + ", " + (cacheBytes == 2 ? "bf16" : "f32");
}

TEST(AttentionStagingTest, BlocksTileTheChunkInWholeCopies) {
  for (mk_i64 bytes : kCacheBytes)
    for (mk_i64 headDim : kHeadDims)
      for (mk_i64 chunk : kChunks) {
        if (!cacheHolds(headDim, bytes))
          continue;
        SCOPED_TRACE(shape(headDim, 1, chunk, bytes));
        mk_i64 rows = attentionBlockRows(headDim, chunk);
        EXPECT_GT(rows, 0);
        EXPECT_EQ(rows & (rows - 1), 0) << "a power of two";
        EXPECT_EQ(chunk % rows, 0) << "whole blocks (chunks are powers of two)";
        EXPECT_TRUE(rows * headDim <= 8 * 1024 || rows == 8);
        const mk_i64 headWords = (headDim * bytes + 3) / 4;
        for (mk_i64 row : {attentionKeyRow(headDim, bytes), attentionValueRow(headDim, bytes)}) {
          const mk_i64 words = row * bytes / 4;
          EXPECT_GE(row, headDim);
          EXPECT_LT(words, headWords + 36) << "at most one bank cycle of padding";
          EXPECT_EQ(row * bytes % 16, 0) << "rows start 16-byte aligned";
          EXPECT_LE(rows * words, attentionSlotFloats(headDim, chunk, bytes));
        }
        // Keys are read 8 lanes a row (8 elements) and 4 rows a warp: the
        // rows' starts 8 elements' words apart in the banks.
        EXPECT_EQ(attentionKeyRow(headDim, bytes) * bytes / 4 % 32, 8 * bytes / 4);
      }
}

TEST(AttentionStagingTest, F32RowsAreAsMeasured) {
  // The f32 rows of the landed ring, unchanged by the element size.
  EXPECT_EQ(attentionKeyRow(64, 4), 72);
  EXPECT_EQ(attentionValueRow(64, 4), 68);
  EXPECT_EQ(attentionKeyRow(6, 4), 8);
  EXPECT_EQ(attentionKeyRow(128, 4), 136);
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
  for (mk_i64 bytes : kCacheBytes)
    for (mk_i64 headDim : kHeadDims)
      for (mk_i64 group : kGroups)
        for (mk_i64 chunk : kChunks) {
          if (!cacheHolds(headDim, bytes))
            continue;
          SCOPED_TRACE(shape(headDim, group, chunk, bytes));
          const mk_i64 stages = attentionStages(headDim, group, chunk, bytes);
          const mk_i64 slotBytes = attentionSlotFloats(headDim, chunk, bytes) * 4;
          const mk_i64 carving = static_cast<mk_i64>(attentionStagingOffset(headDim, group, chunk));
          EXPECT_EQ(carving % 4, 0);
          EXPECT_GE(carving, (group + 2) * headDim + group * chunk + 2 * group);
          const mk_u64 floats = attentionChunkSharedFloats(headDim, group, chunk, 0, bytes);
          if (!attentionChunkStaged(headDim, group, chunk, bytes)) {
            ++unstaged;
            EXPECT_EQ(floats, static_cast<mk_u64>(carving) +
                                  (attentionChunkWarpHeads(headDim, group, chunk, bytes)
                                       ? attentionWarpHeadsFloats(headDim, group, chunk, bytes)
                                       : 0))
                << "no ring, no room for one (only a warp a head's rows)";
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
          const mk_i64 inFlight = (stages - 1) * rows * headDim * bytes;
          const mk_i64 wholeChunk = 2 * chunk * headDim * bytes;
          const bool budgetBound = (stages + 1) * slotBytes > 144 * 1024 ||
                                   carving * 4 + (stages + 1) * slotBytes > 192 * 1024;
          EXPECT_TRUE(inFlight >= 96 * 1024 || inFlight >= wholeChunk || budgetBound);
        }
  EXPECT_GT(staged, 0);
  EXPECT_GT(unstaged, 0);
}

// Which chunks run a warp a q head: at most 64 positions, heads of whole
// 64s up to 256 (two or more consecutive dimensions a lane), a group no
// larger than the warps, and no staging ring.
TEST(AttentionStagingTest, FewPositionsTakeAWarpAHead) {
  // SmolLM2 and the 64 tiny layers built for 544 (chunks of 16), Qwen2.5-1.5B.
  EXPECT_TRUE(attentionChunkWarpHeads(64, 3, 16, 2));
  EXPECT_TRUE(attentionChunkWarpHeads(64, 2, 16, 4));
  EXPECT_TRUE(attentionChunkWarpHeads(128, 6, 32, 2));
  EXPECT_TRUE(attentionChunkWarpHeads(256, 16, 32, 4));
  // The 1B shape's chunks of 48 (two positions a lane); chunks past 64,
  // heads not of whole 64s, groups past the warps.
  EXPECT_TRUE(attentionChunkWarpHeads(64, 4, 48, 2));
  EXPECT_FALSE(attentionChunkWarpHeads(64, 4, 80, 2));
  EXPECT_FALSE(attentionChunkWarpHeads(96, 3, 16, 2));
  EXPECT_FALSE(attentionChunkWarpHeads(32, 4, 16, 4));
  EXPECT_FALSE(attentionChunkWarpHeads(64, 16, 16, 2, 15));
  // A batch's teams keep their own path (the words are reserved for one team).
  EXPECT_EQ(attentionChunkTeamStride(64, 3, 16, 2, 2),
            attentionChunkTeamFloats(64, 3, 16, 2) +
                (attentionTeamsStage(64, 3, 16, 2, 2) ? attentionTeamStagedFloats(64, 16, 2, 8) : 0));
  EXPECT_EQ(attentionChunkTeamStride(64, 3, 16, 2, 1),
            attentionChunkTeamFloats(64, 3, 16, 2) + attentionWarpHeadsFloats(64, 3, 16, 2));
}

// The shapes measured on the H200 (bench/results/2026-12-02-h200-attention-ring):
// what they were measured with.
// A batch's rows a chunk task takes at once: a power of two of teams, at
// most the rows and 8 (named barriers 2-9), each team whole warps covering
// the head's dimensions of o; one team where the ring is used (it is the
// whole CTA's). The shared memory is the teams' words, each team starting
// on a 16-byte boundary.
TEST(AttentionStagingTest, TeamsSplitTheWarpsOverTheRows) {
  for (mk_i64 headDim : kHeadDims)
    for (mk_i64 group : kGroups)
      for (mk_i64 chunk : kChunks)
        for (mk_i64 cacheBytes : kCacheBytes)
          for (mk_i64 rows : {1, 2, 3, 4, 5, 8, 20}) {
            if (!cacheHolds(headDim, cacheBytes))
              continue;
            SCOPED_TRACE(shape(headDim, group, chunk, cacheBytes) + ", rows " +
                         std::to_string(rows));
            mk_i64 teams = attentionChunkTeams(headDim, group, chunk, cacheBytes, rows);
            EXPECT_GE(teams, 1);
            EXPECT_EQ(teams & (teams - 1), 0);
            EXPECT_LE(teams, std::max<mk_i64>(std::min<mk_i64>(rows, 8), 1));
            EXPECT_EQ(16 % teams, 0);
            EXPECT_LE(attentionValueLanes(headDim, 16 / teams), 32);
            if (attentionChunkStaged(headDim, group, chunk, cacheBytes))
              EXPECT_EQ(teams, 1);
            mk_u64 team = attentionChunkTeamFloats(headDim, group, chunk, cacheBytes);
            EXPECT_EQ(team % 4, 0u);
            EXPECT_GE(team, attentionStagingOffset(headDim, group, chunk));
            // Staged teams: each team's words, then its keys and values
            // (rows of whole 16-byte copies), every team's within 160 KiB.
            const bool staged = attentionTeamsStage(headDim, group, chunk, cacheBytes, teams);
            if (teams == 1)
              EXPECT_FALSE(staged);
            mk_u64 stride = attentionChunkTeamStride(headDim, group, chunk, cacheBytes, teams);
            EXPECT_EQ(stride % 4, 0u);
            if (staged) {
              const mk_i64 keyRow = attentionKeyRow(headDim, cacheBytes),
                           valueRow = attentionTeamValueRow(headDim, cacheBytes, 16 / teams);
              EXPECT_GE(keyRow, headDim);
              EXPECT_GE(valueRow, headDim);
              EXPECT_EQ(keyRow * cacheBytes % 16, 0);
              EXPECT_EQ(valueRow * cacheBytes % 16, 0);
              EXPECT_GE((stride - team) * 4,
                        static_cast<mk_u64>(chunk * (keyRow + valueRow) * cacheBytes));
              EXPECT_LE(static_cast<mk_u64>(teams) * stride * 4, 160u * 1024);
            } else if (teams == 1 && attentionChunkWarpHeads(headDim, group, chunk, cacheBytes)) {
              // A chunk of few positions a warp a head: its keys and values
              // (padded rows of whole 16-byte units), then each warp's k and v.
              const mk_i64 rowBytes = attentionWarpHeadsRowBytes(headDim, cacheBytes);
              EXPECT_EQ(rowBytes % 16, 0);
              EXPECT_EQ(rowBytes % 128, 16);
              EXPECT_GE((stride - team) * 4,
                        static_cast<mk_u64>(2 * chunk * rowBytes + 2 * group * headDim * 4));
              EXPECT_EQ(stride, team + attentionWarpHeadsFloats(headDim, group, chunk, cacheBytes));
            } else {
              EXPECT_EQ(stride, team);
            }
            EXPECT_EQ(attentionChunkSharedFloats(headDim, group, chunk, 0, cacheBytes, rows),
                      static_cast<mk_u64>(teams) * stride);
          }
  // The 1B shape's batch builds for 544 positions (chunks of 48): a team a
  // row up to 8 rows, 2 warps each at 8.
  EXPECT_EQ(attentionChunkTeams(64, 4, 48, 2, 4), 4);
  EXPECT_EQ(attentionChunkTeams(64, 4, 48, 2, 8), 8);
  EXPECT_EQ(attentionChunkTeams(64, 4, 48, 2, 20), 8);
  EXPECT_EQ(attentionChunkTeams(64, 4, 48, 2, 1), 1);
  // Their teams stage their chunks, at 4 and 8 rows of bf16 caches and at
  // 4 of f32 (8 teams of f32 rows would pass 160 KiB).
  EXPECT_TRUE(attentionTeamsStage(64, 4, 48, 2, 4));
  EXPECT_TRUE(attentionTeamsStage(64, 4, 48, 2, 8));
  EXPECT_TRUE(attentionTeamsStage(64, 4, 48, 4, 4));
  EXPECT_FALSE(attentionTeamsStage(64, 4, 48, 4, 8));
}

TEST(AttentionStagingTest, MeasuredShapes) {
  // Llama-3.2-1B built for 32800 positions: head 64, group 4, chunk 1024.
  EXPECT_TRUE(attentionChunkStaged(64, 4, 1024, 4));
  EXPECT_EQ(attentionBlockRows(64, 1024), 128);
  EXPECT_EQ(attentionStages(64, 4, 1024, 4), 4);
  // Qwen3-0.6B: head 128, group 2.
  EXPECT_EQ(attentionBlockRows(128, 1024), 64);
  EXPECT_EQ(attentionStages(128, 2, 1024, 4), 4);
  // Builds for 528 positions: chunks of 32 or 64, the register path.
  EXPECT_FALSE(attentionChunkStaged(64, 4, 64, 4));
  EXPECT_FALSE(attentionChunkStaged(64, 3, 32, 4));
  // The same 1B build with bf16 caches: blocks of 128 rows of 144 bytes,
  // 7 slots (96 KiB in flight).
  EXPECT_EQ(attentionBlockRows(64, 1024), 128);
  EXPECT_EQ(attentionKeyRow(64, 2), 72);
  EXPECT_EQ(attentionStages(64, 4, 1024, 2), 7);
  // Qwen3-0.6B with bf16 caches: 64 rows, as with f32 (128 spilled): the
  // rows of a block do not depend on the element.
  EXPECT_EQ(attentionBlockRows(128, 1024), 64);
}

} // namespace
