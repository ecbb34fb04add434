// A weight read as another's values times a constant, without holding
// either: a model that multiplies a layer's output by a scalar (Granite's
// embedding, residual and logits multipliers, Gemma's embedding scale) gets
// the product folded into that layer's weights.
#ifndef MKC_CORE_WEIGHTS_SCALEDVALUES_H
#define MKC_CORE_WEIGHTS_SCALEDVALUES_H

#include "core/weights/WeightValues.h"

#include <memory>
#include <string>

namespace mk {

// The values of `source`, each times `factor` (rounded to f32).
std::shared_ptr<const WeightValues> scaledValues(std::shared_ptr<const WeightValues> source,
                                                 double factor);

// `factor` as the importers print it (%g), and the name of weight `name`
// times it: `<name>.times<factor>`, whichever front end folded it.
std::string factorText(double factor);
std::string scaledWeightName(const std::string &name, double factor);

} // namespace mk

#endif
