#include "core/weights/TransposedValues.h"

#include <algorithm>
#include <vector>

namespace mk {

namespace {

class TransposedValues final : public WeightValues {
public:
  TransposedValues(std::shared_ptr<const WeightValues> source, uint64_t rows, uint64_t cols)
      : source(std::move(source)), rows(rows), cols(cols) {}

  // Output row r is the source's column r: the output rows that [begin,
  // begin + n) touches are read as one block, source row by source row.
  void read(uint64_t begin, uint64_t n, float *out) const override {
    if (n == 0)
      return;
    uint64_t firstRow = begin / rows, endRow = (begin + n - 1) / rows + 1;
    uint64_t width = endRow - firstRow;
    // segments[r]: source row r's columns [firstRow, endRow); then the block
    // [width, rows] is their transpose, by tiles that stay in cache.
    std::vector<float> segments(rows * width), block(width * rows);
    for (uint64_t r = 0; r < rows; ++r)
      source->read(r * cols + firstRow, width, segments.data() + r * width);
    constexpr uint64_t kTile = 32;
    for (uint64_t r0 = 0; r0 < rows; r0 += kTile)
      for (uint64_t c0 = 0; c0 < width; c0 += kTile)
        for (uint64_t r = r0; r < std::min(r0 + kTile, rows); ++r)
          for (uint64_t c = c0; c < std::min(c0 + kTile, width); ++c)
            block[c * rows + r] = segments[r * width + c];
    std::copy_n(block.begin() + static_cast<ptrdiff_t>(begin - firstRow * rows), n, out);
  }

  void release() const override { source->release(); }

  std::string identity() const override {
    std::string inner = source->identity();
    return inner.empty() ? "" : inner + ".T";
  }

private:
  std::shared_ptr<const WeightValues> source;
  uint64_t rows, cols;
};

} // namespace

std::shared_ptr<const WeightValues> transposedValues(std::shared_ptr<const WeightValues> source,
                                                     uint64_t rows, uint64_t cols) {
  return std::make_shared<TransposedValues>(std::move(source), rows, cols);
}

} // namespace mk
