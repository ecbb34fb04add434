// How the output rows of a matrix-vector product are cut into tiles so that
// every SM streams about the same weight bytes.
#ifndef MKC_COMPILER_TASKGRAPH_ROWTILING_H
#define MKC_COMPILER_TASKGRAPH_ROWTILING_H

#include <cstdint>
#include <utility>
#include <vector>

namespace mk {

// Rows [begin, end).
using RowTile = std::pair<uint64_t, uint64_t>;

// Cuts rows [0, rows) into at most `maxTiles` tiles (more only when there are
// more segments than that), never across a cut point: cut points are where
// one weight ends and the next begins, or where one KV group's rows end. Each
// segment is split evenly, with the smallest tile height that keeps the count
// within `maxTiles`, so the largest tile (which decides how long the op
// takes) is as small as it can be. Cut points outside (0, rows) are ignored.
std::vector<RowTile> tileRows(uint64_t rows, std::vector<uint64_t> cuts, uint64_t maxTiles);

} // namespace mk

#endif
