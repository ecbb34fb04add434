// The WEIGHTS section: every weight the task graph names, once, as bf16
// rows, each starting on a 256-byte boundary so that any weight can be
// streamed with 16-byte vector loads and bulk copies. Its index (name,
// shape, offset) goes into the manifest.
#ifndef MKC_RUNTIME_FORMAT_WEIGHTPACKING_H
#define MKC_RUNTIME_FORMAT_WEIGHTPACKING_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"
#include "runtime/format/Artifact.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mk {

constexpr uint64_t kWeightAlignment = 128; // bf16 elements: 256 bytes

struct PackedWeights {
  std::vector<WeightEntry> index; // in order of first use by the graph's operations
  std::vector<uint16_t> data;     // the section, bf16 rounded to nearest even
};

// The section before any value is read: its index, and for each entry the
// weight whose values it holds. Built from shapes alone, so that the manifest
// can be written ahead of the weights.
struct WeightPlan {
  std::vector<WeightEntry> index;     // as PackedWeights::index
  std::vector<const Weight *> values; // per entry, the weight of the table
  uint64_t elements = 0;              // the section's size, in bf16 elements
};

// False with `error` set when a weight the graph names is not in `table` or
// has another number of values than its reference in the graph.
// Every weight reference of the graph (matrices, biases, norms), in
// operation order.
std::vector<const WeightRef *> referencedWeights(const TaskGraph &graph);

bool planWeights(const TaskGraph &graph, const WeightTable &table, WeightPlan &plan,
                 std::string &error);

// Receives the section's bytes in order; false stops the writing.
using WeightBytesSink = std::function<bool(std::span<const uint8_t>)>;

// The section's 2 * plan.elements bytes handed to `sink` a few megabytes at a
// time: each weight's values rounded to bf16 as they are read (a lazy weight's
// source is released once written), zeros between weights. False with
// `error` set when a value rounds to NaN or infinity (the first, as
// checkWeightValues names it), a source cannot be read or the sink fails
// (its own error, when it set one).
bool streamWeights(const WeightPlan &plan, const WeightBytesSink &sink, std::string &error);

// planWeights and streamWeights into memory, for artifacts built in tests.
bool packWeights(const TaskGraph &graph, const WeightTable &table, PackedWeights &packed,
                 std::string &error);

// "" when every entry lies inside `data` on its alignment and names are
// unique, else which entry does not.
std::string checkWeightIndex(const std::vector<WeightEntry> &index, std::span<const uint16_t> data);

// "" when every weight of a checked index is finite; else the first NaN or
// infinity, with its weight, element and byte in the section.
std::string checkWeightValues(const std::vector<WeightEntry> &index,
                              std::span<const uint16_t> data);

// One weight widened to f32; the entry must have passed checkWeightIndex.
std::vector<float> unpackWeight(const WeightEntry &entry, std::span<const uint16_t> data);

// Every weight of a checked index widened to f32.
WeightTable unpackWeights(const std::vector<WeightEntry> &index, std::span<const uint16_t> data);

// Every weight of a checked index as a view of `data` (Weight::source, with
// bf16Bits): nothing copied, as the CPU executor reads a loaded .mk's
// weights. `data` must outlive the table.
WeightTable viewWeights(const std::vector<WeightEntry> &index, std::span<const uint16_t> data);

} // namespace mk

#endif
