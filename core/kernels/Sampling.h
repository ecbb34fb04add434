// The CPU reference of how the token-picking task picks a token
// (core/protocol/Sampling.h defines it step by step; the device function
// codegen/device/SamplingTask.cuh computes the same).
#ifndef MKC_CORE_KERNELS_SAMPLING_H
#define MKC_CORE_KERNELS_SAMPLING_H

#include "core/protocol/Sampling.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mk::kernels {

// "" when the settings are ones the task accepts, else what is wrong,
// naming the setting ("top_p 1.5 is outside (0, 1]").
std::string checkSamplingSettings(const MkSamplingSettings &settings);

// Step 1 on `logits`, in place: each distinct token of `context` (negative
// entries: unknown tokens, skipped) penalized once.
void applyRepetitionPenalty(std::span<float> logits, std::span<const int64_t> context,
                            float penalty);

// Steps 2 to 4: each token's weight after the filters (0: removed), for
// tests; greedy gives the chosen token 1 and every other 0.
std::vector<float> keptWeights(std::span<const float> logits, const MkSamplingSettings &settings);

// Steps 2 to 5 on logits already penalized: the token. `position`: the
// step's context position, the generator's counter.
int64_t sampleToken(std::span<const float> logits, const MkSamplingSettings &settings,
                    int64_t position);

} // namespace mk::kernels

#endif
