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
#include <span>
#include <string>
#include <vector>

namespace mk {

constexpr uint64_t kWeightAlignment = 128; // bf16 elements: 256 bytes

struct PackedWeights {
  std::vector<WeightEntry> index; // in order of first use by the graph's operations
  std::vector<uint16_t> data;     // the section, bf16 rounded to nearest even
};

// False with `error` set when a weight the graph names is not in `table` or
// has another number of values than its reference in the graph.
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

// Every weight of a checked index widened to f32, as the CPU executor reads them.
WeightTable unpackWeights(const std::vector<WeightEntry> &index, std::span<const uint16_t> data);

} // namespace mk

#endif
