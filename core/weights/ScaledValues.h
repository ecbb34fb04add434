// A weight read as another's values times a constant, without holding
// either: a model that multiplies a layer's output by a scalar (Granite's
// embedding, residual and logits multipliers, Gemma's embedding scale) gets
// the product folded into that layer's weights.
#ifndef MKC_CORE_WEIGHTS_SCALEDVALUES_H
#define MKC_CORE_WEIGHTS_SCALEDVALUES_H

#include "core/weights/WeightValues.h"

#include <memory>

namespace mk {

// The values of `source`, each times `factor` (rounded to f32).
std::shared_ptr<const WeightValues> scaledValues(std::shared_ptr<const WeightValues> source,
                                                 double factor);

} // namespace mk

#endif
