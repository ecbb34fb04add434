// AttentionPrepare for KV head g: the q heads of group g and k_g are
// head-normalized and rotated (kernels::fusedAttention's order: norm, then
// rotary); roped q goes to scratch, k_g and v_g to the caches at the step's
// position.
#include "core/taskgraph/OperationLayouts.h"
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

namespace mk::cpu {

namespace {

std::vector<float> normalized(std::vector<float> x, std::span<const float> weight, float eps,
                              int64_t headDim) {
  if (weight.empty())
    return x;
  std::vector<float> y(x.size());
  kernels::headRmsNorm(x, weight, eps, headDim, y);
  return y;
}

std::vector<float> rotated(std::vector<float> x, const Operation &op, int64_t position) {
  if (op.rotaryDim == 0)
    return x;
  kernels::RotaryConfig config{op.headDim, op.rotaryDim, op.invFreq, op.interleaved};
  std::vector<float> y(x.size());
  kernels::rotary(x, config, position, y);
  return y;
}

} // namespace

void runAttentionPrepareTask(TaskContext &context) {
  const Operation &op = context.op;
  const AttentionLayout layout = attentionLayout(op);
  uint64_t group = context.task.begin;

  std::vector<float> q =
      context.load(op.input, layout.query(group), layout.groupLength());
  std::vector<float> k = context.load(op.input, layout.key(group), layout.headDim);
  std::vector<float> v = context.load(op.input, layout.value(group), layout.headDim);

  q = rotated(normalized(std::move(q), context.weights.qNorm, op.eps, op.headDim), op,
              context.position);
  k = rotated(normalized(std::move(k), context.weights.kNorm, op.eps, op.headDim), op,
              context.position);

  context.store(op.roped, layout.query(group), q);
  context.storeSlot(op.keyCache, context.position, layout.slot(group), k);
  context.storeSlot(op.valueCache, context.position, layout.slot(group), v);
}

} // namespace mk::cpu
