// Embed: rows [begin, end) of each step row's token's row of the table; with
// a seed, stored again as fixed point into the output an operation adds into.
#include "runtime/cpu/Tasks.h"

#include <string>

namespace mk::cpu {

void runEmbedTask(TaskContext &context) {
  const Operation &op = context.op;
  const WeightRef &table = op.weights[0];
  uint64_t rows = context.task.end - context.task.begin;

  std::vector<float> widened;
  for (uint64_t r = 0; r < context.rows(); ++r) {
    int64_t token = context.loadToken(r);
    if (token < 0 || static_cast<uint64_t>(token) >= table.rows)
      context.fail("token " + std::to_string(token) + " is outside the " +
                   std::to_string(table.rows) + " rows of table '" + table.name + "'");
    std::span<const float> row =
        context.weights.weights[0].elements(token * table.cols + context.task.begin, rows, widened);
    context.store(op.output, r, context.task.begin, row);
    if (op.seed != kNoBuffer)
      context.store(op.seed, r, context.task.begin, row);
  }
}

} // namespace mk::cpu
