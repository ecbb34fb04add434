// Argmax: the next token, lowest index among the largest logits.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

#include <cmath>

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
  int64_t token = kernels::argmax(logits);

  context.storeToken(token);
}

} // namespace mk::cpu
