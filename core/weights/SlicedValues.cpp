#include "core/weights/SlicedValues.h"

#include <algorithm>

namespace mk {

namespace {

// `slice` of `source`, a [rows, cols] matrix (cols 1 for a vector),
// row-major: a weight of a table that stays (which must outlive the values),
// or values the slice keeps alive.
class SlicedValues : public WeightValues {
public:
  SlicedValues(const Weight &source, uint64_t cols, uint64_t rowBegin, uint64_t colBegin,
               uint64_t width)
      : weight(&source), cols(cols), rowBegin(rowBegin), colBegin(colBegin), width(width) {}
  SlicedValues(std::shared_ptr<const WeightValues> source, uint64_t cols, uint64_t rowBegin,
               uint64_t colBegin, uint64_t width)
      : values(std::move(source)), cols(cols), rowBegin(rowBegin), colBegin(colBegin),
        width(width) {}

  // Element i of the slice is row i / width, column i % width of it: each
  // row's run of the range is one read of the source.
  void read(uint64_t begin, uint64_t count, float *out) const override {
    while (count > 0) {
      uint64_t row = begin / width, column = begin % width;
      uint64_t run = std::min(count, width - column);
      uint64_t at = (rowBegin + row) * cols + colBegin + column;
      if (weight)
        weight->readValues(at, run, out);
      else
        values->read(at, run, out);
      begin += run;
      count -= run;
      out += run;
    }
  }

  // Values it keeps (a mapped tensor's) let their pages go; another slice of
  // them reads them again from the file.
  void release() const override {
    if (values)
      values->release();
  }

private:
  const Weight *weight = nullptr;
  std::shared_ptr<const WeightValues> values;
  uint64_t cols, rowBegin, colBegin, width;
};

} // namespace

std::shared_ptr<const WeightValues> slicedValues(const Weight &source, uint64_t cols,
                                                 uint64_t rowBegin, uint64_t colBegin,
                                                 uint64_t width) {
  return std::make_shared<SlicedValues>(source, cols, rowBegin, colBegin, width);
}

std::string rowsWeightName(const std::string &name, uint64_t begin, uint64_t end) {
  return name + ".rows" + std::to_string(begin) + "-" + std::to_string(end);
}

std::shared_ptr<const WeightValues> slicedValues(std::shared_ptr<const WeightValues> source,
                                                 uint64_t cols, uint64_t rowBegin,
                                                 uint64_t colBegin, uint64_t width) {
  return std::make_shared<SlicedValues>(std::move(source), cols, rowBegin, colBegin, width);
}

std::string checkWeightSlice(const WeightSlice &slice, uint64_t rows, uint64_t cols) {
  if (slice.rowBegin >= slice.rowEnd || slice.rowEnd > rows || slice.colBegin >= slice.colEnd ||
      slice.colEnd > cols)
    return "slice '" + slice.name + "' of '" + slice.source + "' takes rows [" +
           std::to_string(slice.rowBegin) + ", " + std::to_string(slice.rowEnd) + ") and columns [" +
           std::to_string(slice.colBegin) + ", " + std::to_string(slice.colEnd) +
           "], not a non-empty block of its [" + std::to_string(rows) + ", " +
           std::to_string(cols) + "]";
  return "";
}

void addWeightSlices(WeightTable &weights, const std::vector<WeightSlice> &slices) {
  for (const WeightSlice &slice : slices) {
    const Weight *source = weights.find(slice.source);
    if (!source)
      continue;
    uint64_t cols = source->shape.size() == 2 ? static_cast<uint64_t>(source->shape[1]) : 1;
    uint64_t rows = slice.rowEnd - slice.rowBegin, width = slice.colEnd - slice.colBegin;
    Weight piece{slice.name, {static_cast<int64_t>(rows)}, source->storage, {}};
    if (source->shape.size() == 2)
      piece.shape.push_back(static_cast<int64_t>(width));
    if (slice.zero)
      piece.values.assign(rows * width, 0.0f);
    else
      piece.source = slicedValues(*source, cols, slice.rowBegin, slice.colBegin, width);
    weights.add(std::move(piece));
  }
}

} // namespace mk
