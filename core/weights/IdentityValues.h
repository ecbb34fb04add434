// The values of an n x n identity matrix, made on demand: the weight of the
// gemv that the fusion passes make of a norm between a projection and its
// residual add (passes/PostNormAsGemv.cpp), so that an existing task kind
// (a Gemv's prologue norm and residual epilogue) computes it.
#ifndef MKC_CORE_WEIGHTS_IDENTITYVALUES_H
#define MKC_CORE_WEIGHTS_IDENTITYVALUES_H

#include "core/weights/WeightValues.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mk {

// What an mk.weight's `source` says for these values.
constexpr const char *kIdentitySource = "mk.identity";

// The weight of the n x n identity, `mk.identity.<n>`, and whether a name is one.
std::string identityWeightName(uint64_t n);
bool isIdentityWeightName(const std::string &name);

std::shared_ptr<const WeightValues> identityValues(uint64_t n);

} // namespace mk

#endif
