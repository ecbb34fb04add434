// A weight read as the transpose of another's values, without holding
// either: exporters store linear layers [in, out], the .mk holds [out, in].
#ifndef MKC_CORE_WEIGHTS_TRANSPOSEDVALUES_H
#define MKC_CORE_WEIGHTS_TRANSPOSEDVALUES_H

#include "core/weights/WeightValues.h"

#include <cstdint>
#include <memory>

namespace mk {

// The values of a [rows, cols] source read as its [cols, rows] transpose.
// A read of output rows reads every source row's piece of them, so a piece
// of a few output rows costs `rows` reads of the source.
std::shared_ptr<const WeightValues> transposedValues(std::shared_ptr<const WeightValues> source,
                                                     uint64_t rows, uint64_t cols);

} // namespace mk

#endif
