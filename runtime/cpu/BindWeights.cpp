#include "runtime/cpu/BindWeights.h"

#include "core/taskgraph/TaskNames.h"
#include "runtime/cpu/CpuExecutor.h"

namespace mk::cpu {

namespace {

const Weight &findWeight(const TaskGraph &graph, uint32_t op, const WeightTable &table,
                         const WeightRef &ref) {
  const Weight *weight = table.find(ref.name);
  if (!weight)
    throw ExecutionError(describeOperation(graph, op) + ": weight '" + ref.name +
                         "' is not in the weight table");
  uint64_t expected = 0;
  bool fits = !__builtin_mul_overflow(ref.rows, ref.cols, &expected);
  uint64_t held = weight->source ? static_cast<uint64_t>(weight->numElements())
                                 : weight->values.size();
  if (!fits || held != expected || static_cast<uint64_t>(weight->numElements()) != expected)
    throw ExecutionError(describeOperation(graph, op) + ": weight '" + ref.name + "' has " +
                         std::to_string(held) + " values, the graph expects [" +
                         std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + "]");
  return *weight;
}

} // namespace

// Binds every operation's weights: matrices as they are held (f32 values, or
// a mapped .mk's bf16 bits), vectors as f32, widened into `widened` when
// they are held otherwise (they are small).
std::vector<BoundOperation> bindWeights(const TaskGraph &graph, const WeightTable &table,
                                        std::map<std::string, std::vector<float>> &widened) {
  std::vector<BoundOperation> bound(graph.operations.size());
  for (uint32_t op = 0; op < graph.operations.size(); ++op) {
    const Operation &operation = graph.operations[op];
    auto vector = [&](const WeightRef &ref) -> std::span<const float> {
      const Weight &weight = findWeight(graph, op, table, ref);
      if (!weight.source)
        return weight.values;
      auto [it, added] = widened.try_emplace(ref.name);
      if (added)
        it->second = weight.allValues();
      return it->second;
    };
    auto matrix = [&](const WeightRef &ref) -> BoundMatrix {
      const Weight &weight = findWeight(graph, op, table, ref);
      if (weight.source && !weight.source->bf16Bits().empty())
        return {{}, weight.source->bf16Bits()};
      return {vector(ref), {}};
    };
    for (const WeightRef &ref : operation.weights)
      bound[op].weights.push_back(matrix(ref));
    for (const WeightRef &ref : operation.biases)
      bound[op].biases.push_back(vector(ref));
    if (!operation.norm.name.empty())
      bound[op].norm = vector(operation.norm);
    if (!operation.qNorm.name.empty())
      bound[op].qNorm = vector(operation.qNorm);
    if (!operation.kNorm.name.empty())
      bound[op].kNorm = vector(operation.kNorm);
  }
  return bound;
}

} // namespace mk::cpu
