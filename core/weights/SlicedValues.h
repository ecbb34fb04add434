// A weight read as a block of another's rows and columns, without holding
// either: tensor parallelism gives each rank a share of a matrix's rows (q,
// k, v, gate, up) or columns (o_proj, down_proj).
#ifndef MKC_CORE_WEIGHTS_SLICEDVALUES_H
#define MKC_CORE_WEIGHTS_SLICEDVALUES_H

#include "core/weights/WeightTable.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mk {

// A weight a rank's graph names that is a block of a weight of the model:
// rows [rowBegin, rowEnd) and columns [colBegin, colEnd) of `source`.
struct WeightSlice {
  std::string name, source;
  uint64_t rowBegin = 0, rowEnd = 0, colBegin = 0, colEnd = 0;
  bool zero = false; // zeros of that shape instead (a bias rank 0 alone adds)
};

// The block of rows [rowBegin, rowBegin + n) and columns [colBegin,
// colBegin + width) of `source`, a row-major matrix of `cols` columns (1 for
// a vector), read on demand. `source` must outlive the values (a weight of a
// table that stays).
std::shared_ptr<const WeightValues> slicedValues(const Weight &source, uint64_t cols,
                                                 uint64_t rowBegin, uint64_t colBegin,
                                                 uint64_t width);
// The name of rows [begin, end) of weight `name`: `<name>.rows<begin>-<end>`.
std::string rowsWeightName(const std::string &name, uint64_t begin, uint64_t end);
// The same of values read on demand, which the slice keeps alive.
std::shared_ptr<const WeightValues> slicedValues(std::shared_ptr<const WeightValues> source,
                                                 uint64_t cols, uint64_t rowBegin,
                                                 uint64_t colBegin, uint64_t width);

// "" when `slice` lies inside a [rows, cols] source and is not empty, else why not.
std::string checkWeightSlice(const WeightSlice &slice, uint64_t rows, uint64_t cols);

// The slices as weights of `weights`, read on demand from their sources
// (which `weights` must hold, and keep); zeros where a slice says so. A
// slice whose source is missing is skipped (binding the graph then names it).
void addWeightSlices(WeightTable &weights, const std::vector<WeightSlice> &slices);

} // namespace mk

#endif
