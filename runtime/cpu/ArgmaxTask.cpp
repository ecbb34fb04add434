// Argmax: each row's next token, picked as core/protocol/Sampling.h says:
// the lowest index among the largest logits when greedy (the default: from
// the logits' picks where the lm_head writes them), else
// sampled with the request's settings, seeded by the row's position. An
// inactive row picks nothing and keeps its token (TaskContext::storeToken).
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"
#include "core/kernels/Sampling.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <span>
#include <string>

namespace mk::cpu {

namespace {

// Greedy from the tiles' picks: the largest value, the lowest index among
// equals, as over the logits; -1 when a pick is non-finite (the scan of the
// logits then names the logit).
int64_t pickFromPicks(TaskContext &context, uint64_t r) {
  const Operation &op = context.op;
  std::vector<float> picks = context.load(op.picks, r, 0, 2 * uint64_t(op.numPicks));
  float best = 0.0f;
  int64_t chosen = -1;
  for (uint64_t i = 0; i < picks.size(); i += 2) {
    float value = picks[i];
    int64_t index = std::bit_cast<uint32_t>(picks[i + 1]);
    if (std::isnan(value))
      return -1;
    if (chosen < 0 || value > best || (value == best && index < chosen)) {
      best = value;
      chosen = index;
    }
  }
  return chosen;
}

int64_t pickToken(TaskContext &context, uint64_t r) {
  const Operation &op = context.op;
  uint64_t length = op.inputLength;
  const StepRow &row = context.row(r);
  const TokenChoice *choice = context.choice();
  bool plainGreedy = !choice || (mk_sampling_is_greedy(&choice->settings) &&
                                 !mk_sampling_has_penalty(&choice->settings));
  if (plainGreedy && op.picks != kNoBuffer && row.active)
    if (int64_t picked = pickFromPicks(context, r); picked >= 0)
      return picked;
  std::vector<float> logits = context.load(op.input, r, 0, length);
  if (!row.active)
    return -1;
  // As the kernel's MK_ERROR_NON_FINITE_LOGIT: the lowest such index.
  for (uint64_t i = 0; i < length; ++i)
    if (!std::isfinite(logits[i]))
      context.fail("logit " + std::to_string(i) + (context.rows() > 1 ? " of row " + std::to_string(r) : "") +
                   " is " + (std::isnan(logits[i]) ? "NaN" : "infinite") +
                   ": the model computes non-finite logits");
  if (!choice)
    return kernels::argmax(logits);
  std::vector<std::vector<int64_t>> *contexts = choice->contextTokens;
  if (contexts && mk_sampling_has_penalty(&choice->settings)) {
    const std::vector<int64_t> &history = (*contexts)[row.sequence];
    size_t seen = std::min<size_t>(history.size(), static_cast<size_t>(row.position) + 1);
    kernels::applyRepetitionPenalty(logits, std::span<const int64_t>(history.data(), seen),
                                    choice->settings.repetitionPenalty);
  }
  return kernels::sampleToken(logits, choice->settings, row.position);
}

} // namespace

void runArgmaxTask(TaskContext &context) {
  for (uint64_t r = 0; r < context.rows(); ++r)
    context.storeToken(r, pickToken(context, r));
}

} // namespace mk::cpu
