#include "runtime/format/WeightPacking.h"

#include "runtime/format/Bf16.h"

#include <set>

namespace mk {

namespace {

// Every weight reference of the graph, in operation order.
std::vector<const WeightRef *> referencedWeights(const TaskGraph &graph) {
  std::vector<const WeightRef *> refs;
  for (const Operation &op : graph.operations) {
    for (const WeightRef &ref : op.weights)
      refs.push_back(&ref);
    for (const WeightRef &ref : op.biases)
      refs.push_back(&ref);
    for (const WeightRef *ref : {&op.norm, &op.qNorm, &op.kNorm})
      if (!ref->name.empty())
        refs.push_back(ref);
  }
  return refs;
}

} // namespace

bool packWeights(const TaskGraph &graph, const WeightTable &table, PackedWeights &packed,
                 std::string &error) {
  // First the index and the section's size, then one allocation filled in
  // place: growing a multi-gigabyte vector value by value would copy it
  // several times and hold two copies at once.
  std::set<std::string> seen;
  std::vector<const Weight *> sources;
  uint64_t size = 0;
  for (const WeightRef *ref : referencedWeights(graph)) {
    if (!seen.insert(ref->name).second)
      continue;
    const Weight *weight = table.find(ref->name);
    if (!weight) {
      error = "weight '" + ref->name +
              "' has no values (a model read from mk IR declares "
              "weights without values; compile the ONNX model)";
      return false;
    }
    if (weight->values.size() != ref->rows * ref->cols) {
      error = "weight '" + ref->name + "' has " + std::to_string(weight->values.size()) +
              " values, the task graph expects [" + std::to_string(ref->rows) + ", " +
              std::to_string(ref->cols) + "]";
      return false;
    }
    uint64_t offset = (size + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
    packed.index.push_back({ref->name, ref->rows, ref->cols, offset});
    sources.push_back(weight);
    size = offset + weight->values.size();
  }
  packed.data.assign(size, 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    uint16_t *out = packed.data.data() + packed.index[i].offset;
    for (float value : sources[i]->values)
      *out++ = toBf16(value);
  }
  // A finite f32 past bf16's largest value rounds to infinity; the loader
  // would refuse the file, so the compiler does first.
  if (std::string problem = checkWeightValues(packed.index, packed.data); !problem.empty()) {
    error = problem + " (rounded to bf16)";
    return false;
  }
  return true;
}

std::string checkWeightIndex(const std::vector<WeightEntry> &index,
                             std::span<const uint16_t> data) {
  std::set<std::string> names;
  for (size_t i = 0; i < index.size(); ++i) {
    const WeightEntry &entry = index[i];
    std::string what = "weight index entry " + std::to_string(i) + " ('" + entry.name + "')";
    if (!names.insert(entry.name).second)
      return what + " repeats a name";
    uint64_t elements = 0;
    if (__builtin_mul_overflow(entry.rows, entry.cols, &elements) || entry.offset > data.size() ||
        elements > data.size() - entry.offset)
      return what + ": [" + std::to_string(entry.rows) + ", " + std::to_string(entry.cols) +
             "] at element " + std::to_string(entry.offset) +
             " lies outside the WEIGHTS section's " + std::to_string(data.size()) + " elements";
    if (entry.offset % kWeightAlignment != 0)
      return what + ": offset " + std::to_string(entry.offset) + " is not a multiple of " +
             std::to_string(kWeightAlignment) + " elements";
  }
  return "";
}

std::string checkWeightValues(const std::vector<WeightEntry> &index,
                              std::span<const uint16_t> data) {
  for (const WeightEntry &entry : index) {
    std::span<const uint16_t> bits = data.subspan(entry.offset, entry.rows * entry.cols);
    for (size_t i = 0; i < bits.size(); ++i)
      if ((bits[i] & 0x7f80u) == 0x7f80u) // exponent all ones: infinity or NaN
        return "weight '" + entry.name + "' element " + std::to_string(i) + " (byte " +
               std::to_string(2 * (entry.offset + i)) + " of the section) is " +
               ((bits[i] & 0x7fu) ? "NaN" : "infinite") +
               ": a model with NaN or infinite weights computes NaN logits";
  }
  return "";
}

std::vector<float> unpackWeight(const WeightEntry &entry, std::span<const uint16_t> data) {
  std::span<const uint16_t> bits = data.subspan(entry.offset, entry.rows * entry.cols);
  std::vector<float> values(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    values[i] = fromBf16(bits[i]);
  return values;
}

WeightTable unpackWeights(const std::vector<WeightEntry> &index, std::span<const uint16_t> data) {
  WeightTable table;
  for (const WeightEntry &entry : index) {
    std::vector<int64_t> shape = {static_cast<int64_t>(entry.rows)};
    if (entry.cols != 1)
      shape.push_back(static_cast<int64_t>(entry.cols));
    table.add({entry.name, shape, StorageType::BF16, unpackWeight(entry, data)});
  }
  return table;
}

} // namespace mk
