#include "core/weights/WeightTable.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace mk {

std::string describeNonFinite(const std::vector<float> &values, const std::string &what) {
  size_t count = 0, first = values.size();
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]) && count++ == 0)
      first = i;
  if (count == 0)
    return "";
  float value = values[first];
  return what + " holds " + std::to_string(count) + " non-finite value" + (count > 1 ? "s" : "") +
         " (the first, element " + std::to_string(first) + ", is " +
         (std::isnan(value) ? "NaN" : value > 0 ? "+inf" : "-inf") +
         "): a model with NaN or infinite weights computes NaN logits";
}

const char *storageTypeName(StorageType type) {
  switch (type) {
  case StorageType::F32:
    return "f32";
  case StorageType::F16:
    return "f16";
  case StorageType::BF16:
    return "bf16";
  }
  return "?";
}

int64_t Weight::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t lazyWeightElements() {
  if (const char *given = std::getenv("MKC_LAZY_WEIGHT_ELEMENTS")) {
    char *end = nullptr;
    long long value = std::strtoll(given, &end, 10);
    if (end != given && *end == '\0' && value >= 0)
      return value;
  }
  return int64_t{1} << 20;
}

void Weight::readValues(uint64_t begin, uint64_t count, float *out) const {
  if (source) {
    source->read(begin, count, out);
    return;
  }
  std::copy(values.begin() + static_cast<ptrdiff_t>(begin),
            values.begin() + static_cast<ptrdiff_t>(begin + count), out);
}

std::vector<float> Weight::allValues() const {
  if (!source)
    return values;
  std::vector<float> all(static_cast<size_t>(numElements()));
  source->read(0, all.size(), all.data());
  return all;
}

bool WeightTable::hasLazyWeights() const {
  for (const auto &entry : weights)
    if (entry.second.isLazy())
      return true;
  return false;
}

void WeightTable::materialize() {
  for (auto &entry : weights) {
    Weight &weight = entry.second;
    if (!weight.source)
      continue;
    weight.values = weight.allValues();
    weight.source.reset();
  }
}

std::string WeightTable::add(Weight weight) {
  std::string name = weight.name;
  for (int suffix = 1; weights.count(name); ++suffix)
    name = weight.name + "." + std::to_string(suffix);
  weight.name = name;
  weights.emplace(name, std::move(weight));
  return name;
}

const Weight *WeightTable::find(const std::string &name) const {
  auto it = weights.find(name);
  return it == weights.end() ? nullptr : &it->second;
}

} // namespace mk
