// Argmax: the next token, lowest index among the largest logits.
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

namespace mk::cpu {

void runArgmaxTask(TaskContext &context) {
  const Operation &op = context.op;
  uint64_t length = context.elementsOf(op.input);

  std::vector<float> logits = context.load(op.input, 0, length);
  int64_t token = kernels::argmax(logits);

  context.storeToken(token);
}

} // namespace mk::cpu
