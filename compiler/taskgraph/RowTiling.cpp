#include "compiler/taskgraph/RowTiling.h"

#include <algorithm>

namespace mk {

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t tileCount(const std::vector<uint64_t> &segments, uint64_t height) {
  uint64_t count = 0;
  for (uint64_t length : segments)
    count += ceilDiv(length, height);
  return count;
}

} // namespace

std::vector<RowTile> tileRows(uint64_t rows, std::vector<uint64_t> cuts, uint64_t maxTiles) {
  if (rows == 0)
    return {};
  cuts.push_back(0);
  cuts.push_back(rows);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.erase(std::remove_if(cuts.begin(), cuts.end(), [&](uint64_t cut) { return cut > rows; }),
             cuts.end());

  std::vector<uint64_t> segments;
  uint64_t longest = 0;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    segments.push_back(cuts[i + 1] - cuts[i]);
    longest = std::max(longest, segments.back());
  }

  // The count only falls as tiles grow, so the smallest height that fits is
  // found by bisection; at `longest` every segment is one tile.
  uint64_t low = ceilDiv(rows, std::max<uint64_t>(maxTiles, 1)), high = longest;
  low = std::min(low, high);
  while (low < high) {
    uint64_t middle = low + (high - low) / 2;
    if (tileCount(segments, middle) <= maxTiles)
      high = middle;
    else
      low = middle + 1;
  }

  std::vector<RowTile> tiles;
  for (size_t i = 0; i < segments.size(); ++i) {
    uint64_t count = ceilDiv(segments[i], low), begin = cuts[i];
    // Even split: the first `extra` tiles get one row more than the rest.
    uint64_t base = segments[i] / count, extra = segments[i] % count;
    for (uint64_t t = 0; t < count; ++t) {
      uint64_t height = base + (t < extra ? 1 : 0);
      tiles.push_back({begin, begin + height});
      begin += height;
    }
  }
  return tiles;
}

} // namespace mk
