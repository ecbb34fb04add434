#include "runtime/format/WeightPacking.h"

#include "runtime/format/Bf16.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace mk {

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

namespace {

// A weight's bf16 bits in the section, widened when read.
class Bf16View final : public WeightValues {
public:
  explicit Bf16View(std::span<const uint16_t> bits) : bits(bits) {}
  void read(uint64_t begin, uint64_t count, float *out) const override {
    for (uint64_t i = 0; i < count; ++i)
      out[i] = fromBf16(bits[begin + i]);
  }
  std::span<const uint16_t> bf16Bits() const override { return bits; }

private:
  std::span<const uint16_t> bits;
};

// Which weight's element is NaN or infinite, and where in the section.
std::string describeNonFiniteBits(const WeightEntry &entry, uint64_t element, uint16_t bits) {
  return "weight '" + entry.name + "' element " + std::to_string(element) + " (byte " +
         std::to_string(2 * (entry.offset + element)) + " of the section) is " +
         ((bits & 0x7fu) ? "NaN" : "infinite") +
         ": a model with NaN or infinite weights computes NaN logits";
}

} // namespace

bool planWeights(const TaskGraph &graph, const WeightTable &table, WeightPlan &plan,
                 std::string &error) {
  std::set<std::string> seen;
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
    uint64_t count = weight->isLazy() ? static_cast<uint64_t>(weight->numElements())
                                      : weight->values.size();
    if (count != ref->rows * ref->cols) {
      error = "weight '" + ref->name + "' has " + std::to_string(count) +
              " values, the task graph expects [" + std::to_string(ref->rows) + ", " +
              std::to_string(ref->cols) + "]";
      return false;
    }
    uint64_t offset =
        (plan.elements + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment;
    plan.index.push_back({ref->name, ref->rows, ref->cols, offset});
    plan.values.push_back(weight);
    plan.elements = offset + count;
  }
  return true;
}

bool streamWeights(const WeightPlan &plan, const WeightBytesSink &sink, std::string &error) {
  // A piece of a weight at a time: 4 MB of f32 and 2 MB of bf16 held,
  // whatever the model's size.
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  std::vector<float> values;
  std::vector<uint16_t> bits;
  auto emit = [&](const uint16_t *data, uint64_t count) {
    if (sink(std::span(reinterpret_cast<const uint8_t *>(data), count * 2)))
      return true;
    if (error.empty())
      error = "writing the WEIGHTS section failed";
    return false;
  };
  auto emitZeros = [&](uint64_t count) {
    bits.assign(std::min(count, kPiece), 0);
    for (uint64_t done = 0; done < count;) {
      uint64_t n = std::min(count - done, kPiece);
      if (!emit(bits.data(), n))
        return false;
      done += n;
    }
    return true;
  };
  uint64_t written = 0;
  for (size_t i = 0; i < plan.index.size(); ++i) {
    const WeightEntry &entry = plan.index[i];
    const Weight &weight = *plan.values[i];
    if (!emitZeros(entry.offset - written))
      return false;
    uint64_t count = entry.rows * entry.cols;
    for (uint64_t begin = 0; begin < count; begin += kPiece) {
      uint64_t n = std::min(count - begin, kPiece);
      values.resize(n);
      bits.resize(n);
      try {
        weight.readValues(begin, n, values.data());
      } catch (const std::exception &failure) {
        error = "weight '" + entry.name + "': " + failure.what();
        return false;
      }
      // One pass that the compiler vectorizes; the rare bad piece is
      // searched again for its first bad value.
      bool nonFinite = false;
      for (uint64_t k = 0; k < n; ++k) {
        bits[k] = toBf16(values[k]);
        nonFinite |= (bits[k] & 0x7f80u) == 0x7f80u;
      }
      // A finite f32 past bf16's largest value rounds to infinity; the loader
      // would refuse the file, so the compiler does first.
      for (uint64_t k = 0; nonFinite && k < n; ++k)
        if ((bits[k] & 0x7f80u) == 0x7f80u) {
          // Either the model's value (a lazy weight is checked only here) or
          // a finite f32 that rounds to infinity.
          error = describeNonFiniteBits(entry, begin + k, bits[k]) +
                  (std::isfinite(values[k]) ? " (rounded to bf16)" : "");
          return false;
        }
      if (!emit(bits.data(), n))
        return false;
    }
    if (weight.source)
      weight.source->release();
    written = entry.offset + count;
  }
  return emitZeros(plan.elements - written);
}

bool packWeights(const TaskGraph &graph, const WeightTable &table, PackedWeights &packed,
                 std::string &error) {
  WeightPlan plan;
  if (!planWeights(graph, table, plan, error))
    return false;
  // One allocation filled in place: growing a multi-gigabyte vector value by
  // value would copy it several times and hold two copies at once.
  packed.data.assign(plan.elements, 0);
  uint8_t *out = reinterpret_cast<uint8_t *>(packed.data.data());
  bool streamed = streamWeights(
      plan,
      [&](std::span<const uint8_t> bytes) {
        std::copy(bytes.begin(), bytes.end(), out);
        out += bytes.size();
        return true;
      },
      error);
  if (!streamed)
    return false;
  packed.index = std::move(plan.index);
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
        return describeNonFiniteBits(entry, i, bits[i]);
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

WeightTable viewWeights(const std::vector<WeightEntry> &index, std::span<const uint16_t> data) {
  WeightTable table;
  for (const WeightEntry &entry : index) {
    std::vector<int64_t> shape = {static_cast<int64_t>(entry.rows)};
    if (entry.cols != 1)
      shape.push_back(static_cast<int64_t>(entry.cols));
    Weight weight{entry.name, shape, StorageType::BF16, {}};
    weight.source = std::make_shared<Bf16View>(data.subspan(entry.offset, entry.rows * entry.cols));
    table.add(std::move(weight));
  }
  return table;
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
