// Initializers too big to decode up front: a weight stored as external data
// is read from its file, mapped, only when the .mk is written (and let go
// once written), so that compiling an 8B model holds a few of its tensors'
// pages at a time instead of all of it as f32. The constant folder passes
// such a tensor through Identity, a Cast that keeps its values and a 2-D
// Transpose without reading it; any other op reads it whole
// (Tensor::isLazy, materializeTensor). Which initializers are read so:
// lazyWeightElements() (core/weights/WeightValues.h).
#ifndef MKC_FRONTENDS_ONNX_LAZYVALUES_H
#define MKC_FRONTENDS_ONNX_LAZYVALUES_H

#include "core/weights/WeightValues.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mk::onnx_import {

// `count` elements of ONNX type `dataType` (FLOAT, FLOAT16, BFLOAT16 or
// DOUBLE) at byte `offset` of the regular file `path`, which the loader has
// checked holds them. The range is mapped at the first read and unmapped by
// release(); a file that has shrunk since is an error, not a SIGBUS.
std::shared_ptr<const WeightValues> externalValues(std::string path, uint64_t offset,
                                                   uint64_t count, int dataType,
                                                   std::string what);

} // namespace mk::onnx_import

#endif
