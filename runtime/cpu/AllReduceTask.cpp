// AllReduce: rows [begin, end) of out = residual + (((in_0 + in_1) + in_2)
// + ...), in_p rank p's partial sums, in rank order on every rank, so that
// every rank computes the same bits (and one rank gives the residual
// epilogue's residual + in).
#include "runtime/cpu/Tasks.h"

#include "core/kernels/Kernels.h"

namespace mk::cpu {

void runAllReduceTask(TaskContext &context) {
  const Operation &op = context.op;
  uint64_t begin = context.task.begin, rows = context.task.end - begin;
  for (uint64_t r = 0; r < context.rows(); ++r) {
    std::vector<float> sum = context.loadFromRank(0, op.input, r, begin, rows);
    for (int64_t rank = 1; rank < context.numRanks(); ++rank) {
      std::vector<float> partial = context.loadFromRank(rank, op.input, r, begin, rows);
      for (uint64_t i = 0; i < rows; ++i)
        sum[i] += partial[i];
    }
    std::vector<float> residual = context.load(op.residual, r, begin, rows), out(rows);
    kernels::add(residual, sum, out);
    context.store(op.output, r, begin, out);
  }
}

} // namespace mk::cpu
