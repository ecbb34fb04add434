// Argmax: the next token, picked as core/protocol/Sampling.h says: the
// lowest index among the largest logits when greedy (the default), else
// sampled with the request's settings, seeded by the step's position.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"
#include "core/kernels/Sampling.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <string>

namespace mk::cpu {

void runArgmaxTask(TaskContext &context) {
  const Operation &op = context.op;
  uint64_t length = context.elementsOf(op.input);

  std::vector<float> logits = context.load(op.input, 0, length);
  // As the kernel's MK_ERROR_NON_FINITE_LOGIT: the lowest such index.
  for (uint64_t i = 0; i < length; ++i)
    if (!std::isfinite(logits[i]))
      context.fail("logit " + std::to_string(i) + " is " +
                   (std::isnan(logits[i]) ? "NaN" : "infinite") +
                   ": the model computes non-finite logits");
  const TokenChoice *choice = context.choice();
  int64_t token = 0;
  if (!choice) {
    token = kernels::argmax(logits);
  } else {
    std::vector<int64_t> *history = choice->contextTokens;
    int64_t position = context.position;
    if (history && mk_sampling_has_penalty(&choice->settings)) {
      size_t seen = std::min<size_t>(history->size(), static_cast<size_t>(position) + 1);
      kernels::applyRepetitionPenalty(logits, std::span<const int64_t>(history->data(), seen),
                                      choice->settings.repetitionPenalty);
    }
    token = kernels::sampleToken(logits, choice->settings, position);
  }

  context.storeToken(token);
}

} // namespace mk::cpu
