// Values for a model known only by its shapes (a .mlir of mk IR declares its
// weights without values): random, but scaled like a trained model's, so
// that a compiled shape runs with activations near unit size and finite
// logits. For benchmarks and GPU checks of shapes too big to export.
#ifndef MKC_COMPILER_DRIVER_RANDOMWEIGHTS_H
#define MKC_COMPILER_DRIVER_RANDOMWEIGHTS_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"

#include <cstdint>

namespace mk {

// Every weight `graph` names, once: norms uniform in 1 +- 0.1, biases in
// +-0.1, embedding rows in +-1, matrices in +-sqrt(3 / inputs) (unit
// variance out for unit variance in). The same seed gives the same values.
WeightTable randomWeights(const TaskGraph &graph, uint64_t seed = 987654321);

// The same values, each weight generated when it is read (Weight::source):
// what `mkc compile --random-weights` writes, so that an 8B shape never
// holds its 32 GB of f32 values.
WeightTable lazyRandomWeights(const TaskGraph &graph, uint64_t seed = 987654321);

} // namespace mk

#endif
