#include "core/weights/SlicedValues.h"

#include <algorithm>

namespace mk {

namespace {

class SlicedValues : public WeightValues {
public:
  SlicedValues(const Weight &source, uint64_t cols, uint64_t rowBegin, uint64_t colBegin,
               uint64_t width)
      : source(source), cols(cols), rowBegin(rowBegin), colBegin(colBegin), width(width) {}

  // Element i of the slice is row i / width, column i % width of it: each
  // row's run of the range is one read of the source.
  void read(uint64_t begin, uint64_t count, float *out) const override {
    while (count > 0) {
      uint64_t row = begin / width, column = begin % width;
      uint64_t run = std::min(count, width - column);
      source.readValues((rowBegin + row) * cols + colBegin + column, run, out);
      begin += run;
      count -= run;
      out += run;
    }
  }

private:
  const Weight &source;
  uint64_t cols, rowBegin, colBegin, width;
};

} // namespace

std::shared_ptr<const WeightValues> slicedValues(const Weight &source, uint64_t cols,
                                                 uint64_t rowBegin, uint64_t rowEnd,
                                                 uint64_t colBegin, uint64_t colEnd) {
  (void)rowEnd;
  return std::make_shared<SlicedValues>(source, cols, rowBegin, colBegin, colEnd - colBegin);
}

} // namespace mk
