// A weight read as a block of another's rows and columns, without holding
// either: tensor parallelism gives each rank a share of a matrix's rows (q,
// k, v, gate, up) or columns (o_proj, down_proj).
#ifndef MKC_CORE_WEIGHTS_SLICEDVALUES_H
#define MKC_CORE_WEIGHTS_SLICEDVALUES_H

#include "core/weights/WeightTable.h"

#include <cstdint>
#include <memory>

namespace mk {

// Rows [rowBegin, rowEnd) and columns [colBegin, colEnd) of `source`, a
// [rows, cols] matrix (cols 1 for a vector), row-major. `source` must
// outlive the values (a weight of a table that stays).
std::shared_ptr<const WeightValues> slicedValues(const Weight &source, uint64_t cols,
                                                 uint64_t rowBegin, uint64_t rowEnd,
                                                 uint64_t colBegin, uint64_t colEnd);

} // namespace mk

#endif
