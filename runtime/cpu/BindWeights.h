// Every operation's weights found by name in a weight table, once, before
// any step: what the executor's task functions read.
#ifndef MKC_RUNTIME_CPU_BINDWEIGHTS_H
#define MKC_RUNTIME_CPU_BINDWEIGHTS_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"
#include "runtime/cpu/TaskContext.h"

#include <map>
#include <string>
#include <vector>

namespace mk::cpu {

// Matrices as they are held (f32 values, or a mapped .mk's bf16 bits),
// vectors as f32, widened into `widened` when held otherwise (they are
// small). Throws ExecutionError naming the operation when a weight is
// missing or has another shape.
std::vector<BoundOperation> bindWeights(const TaskGraph &graph, const WeightTable &table,
                                        std::map<std::string, std::vector<float>> &widened);

} // namespace mk::cpu

#endif
