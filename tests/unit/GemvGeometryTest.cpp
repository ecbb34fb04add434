// The gemv geometry (core/protocol/GemvGeometry.h): the weight ring's order
// of a gemv task's passes (the producer fills slots in that order and the
// consumers find their rows by it, so every pass a consumer warp takes must
// have exactly one place, densely, and fit its slot), and the batches,
// which must cover each chunk of each row exactly once.
#include "core/protocol/GemvGeometry.h"
#include "core/protocol/SharedMemory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace {

using namespace mk;

// The passes the consumers of a tile of `rows` rows take, as GemvTask.cuh
// loops: warp w's first row is w * rowsPerWarp, its passes advance by
// rowsPerPass.
int consumerPasses(const GemvGeometry &g, unsigned long long rows, int warp) {
  unsigned long long first = static_cast<unsigned long long>(warp) * g.rowsPerWarp;
  if (first >= rows)
    return 0;
  return static_cast<int>((rows - first + g.rowsPerPass() - 1) / g.rowsPerPass());
}

// Every consumer warp's pass has a place; the warps of one place are
// consecutive, at most warpsPerSlot, and their rows fit the slot; the
// places are dense.
TEST(GemvGeometryTest, RingOrderGivesEveryConsumerPassOnePlace) {
  for (int input : {8, 16, 64, 576, 1536, 2048, 8192, 14336})
    for (int weightRows : {1, 2})
      for (int threads : {480, 512})
        for (unsigned long long slotMin : {0ull, 16384ull, 65536ull})
          for (unsigned long long rows : {1ull, 2ull, 7ull, 15ull, 16ull, 31ull, 97ull, 240ull}) {
            GemvGeometry g = gemvGeometry(input, weightRows, threads, 8);
            const unsigned long long slotBytes =
                gemvRingSlotBytes(std::max(gemvWarpPassBytes(g), slotMin));
            GemvRingOrder order(g, rows, slotBytes);
            std::map<unsigned long long, std::vector<int>> warpsOf;
            for (int warp = 0; warp < g.warps; ++warp)
              for (int pass = 0; pass < consumerPasses(g, rows, warp); ++pass) {
                ASSERT_LT(warp, order.warpsAt(pass)) << input << " " << rows << " " << warp;
                warpsOf[order.place(pass, warp)].push_back(warp);
              }
            ASSERT_EQ(warpsOf.size(), order.slots()) << "K " << input << ", rows " << rows;
            if (!warpsOf.empty())
              ASSERT_EQ(warpsOf.rbegin()->first, order.slots() - 1) << "places are not dense";
            for (const auto &[place, warps] : warpsOf) {
              ASSERT_LE(static_cast<int>(warps.size()), order.warpsPerSlot);
              ASSERT_EQ(warps.front() % order.warpsPerSlot, 0) << "a slot starts a group";
              for (size_t k = 1; k < warps.size(); ++k)
                ASSERT_EQ(warps[k], warps[k - 1] + 1) << "a slot's warps are consecutive";
              ASSERT_LE(warps.size() * gemvWarpPassBytes(g), slotBytes);
            }
          }
}

TEST(GemvGeometryTest, BatchesCoverEveryChunkOfEveryRowOnce) {
  for (int input : {8, 64, 576, 2048, 8192})
    for (int loads : {1, 8}) {
      GemvGeometry g = gemvGeometry(input, 1, 480, loads);
      std::map<std::pair<int, int>, int> covered; // (row in pass, chunk) -> times
      for (int warp = 0; warp < g.warps; ++warp)
        for (int group = 0; group < g.rowsPerWarp; ++group)
          for (int inRow = 0; inRow < g.batchesPerPass; ++inRow)
            for (int lane = 0; lane < g.lanes; ++lane)
              for (int b = 0; b < g.batch; ++b) {
                int chunk = lane + (inRow * g.batch + b) * g.lanes;
                if (chunk < g.chunks)
                  ++covered[{warp * g.rowsPerWarp + group, chunk}];
              }
      ASSERT_EQ(covered.size(), static_cast<size_t>(g.rowsPerPass()) * g.chunks) << input;
      for (const auto &[where, times] : covered)
        ASSERT_EQ(times, 1) << "K " << input << ": row " << where.first << " chunk " << where.second;
    }
}

} // namespace

namespace {

// A gemv of several rows (GemvRowsTask.cuh) lays out in shared memory, in
// floats: the rows' slices (or, over the same words, the warps' partial
// sums), then with a norm the norm's weights of a slice and the sums of
// squares, then each row's inverse RMS; then, on tensor cores where the
// input is one slice, the warps' stages of weights. The regions must not
// overlap, 16-byte units must stay aligned, and gemvSharedFloats must
// reserve all of it.
TEST(GemvGeometryTest, RowsRegionsAreDisjointAlignedAndReserved) {
  for (long long input : {64, 96, 224, 576, 1536, 2048, 4096, 8192, 14336})
    for (long long rows : {2, 3, 4, 5, 7, 8, 16, 20})
      for (bool norm : {false, true}) {
        const long long slice = gemvRowsSlice(input, rows), stride = gemvRowsStride(input, rows);
        ASSERT_LE(rows * slice, 32768 + rows * 8 * 32) << input << " x " << rows;
        const long long slices = rows * stride;
        const long long normOffset = gemvRowsNormOffset(input, rows);
        ASSERT_GE(normOffset, slices);
        ASSERT_GE(normOffset, kGemvRowsScratchFloats) << "the warps' partial sums fit";
        // The sums of squares: a row over kGemvRowsMaxWarps / rows warps, or one a row.
        const long long parts = kGemvRowsMaxWarps / rows > 1 ? kGemvRowsMaxWarps / rows : 1;
        ASSERT_LE(rows * parts, gemvRowsSquares(rows));
        const long long end = gemvRowsSharedFloats(input, rows, norm);
        ASSERT_EQ(end, normOffset + (norm ? slice + gemvRowsSquares(rows) : 0) + rows);
        const long long stage = gemvRowsStageFloats(input, rows);
        const long long total = gemvRowsTotalFloats(input, rows, norm);
        EXPECT_EQ(stage > 0, gemvRowsOnTensorCores(input, rows) && slice == input);
        if (stage > 0) {
          ASSERT_EQ(gemvRowsStageOffset(input, rows, norm) % 4, 0) << "16-byte stage units";
          ASSERT_GE(gemvRowsStageOffset(input, rows, norm), end);
          ASSERT_EQ(total, gemvRowsStageOffset(input, rows, norm) + stage);
        } else {
          ASSERT_EQ(total, end);
        }
        ASSERT_EQ(gemvSharedFloats(input, 0, norm, 0, 0, 0, rows), static_cast<mk_u64>(total));
        // Slices of whole 16-byte units keep every row's slice aligned.
        if (input % 4 == 0 && slice % 4 == 0)
          ASSERT_EQ(stride % 4, 0);
        ASSERT_LE(total * 4, 227 * 1024) << "fits an sm_90 CTA: " << input << " x " << rows;
      }
}

} // namespace
