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
    std::vector<float> segment(width), block(width * rows);
    for (uint64_t r = 0; r < rows; ++r) {
      source->read(r * cols + firstRow, width, segment.data());
      for (uint64_t c = 0; c < width; ++c)
        block[c * rows + r] = segment[c];
    }
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
