// The model's weights, by name, as the compiler holds them: values widened to
// f32 for the reference interpreter, with the dtype they are stored in.
#ifndef MKC_CORE_WEIGHTS_WEIGHTTABLE_H
#define MKC_CORE_WEIGHTS_WEIGHTTABLE_H

#include "core/weights/WeightValues.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mk {

enum class StorageType { F32, F16, BF16 };

const char *storageTypeName(StorageType type);

struct Weight {
  std::string name;
  std::vector<int64_t> shape;
  StorageType storage = StorageType::F32;
  std::vector<float> values;
  // Set for a weight too big to hold (mapped or generated): `values` is
  // empty and these give them. Read either kind with readValues/allValues.
  std::shared_ptr<const WeightValues> source;

  int64_t numElements() const;
  bool isLazy() const { return source != nullptr; }
  // Elements [begin, begin + count) as f32, from `values` or the source.
  void readValues(uint64_t begin, uint64_t count, float *out) const;
  // Every value, read from the source when there is one: for the few users
  // (small vectors, the reference interpreter) that need them all at once.
  std::vector<float> allValues() const;
};

// "" when every value of `values` is finite; else what the first NaN or
// infinity is and where, for an error naming `what` (the tensor). A model
// whose weights hold one computes NaN everywhere it reaches, so the
// importers refuse it rather than compile it (docs/reliability.md).
std::string describeNonFinite(const std::vector<float> &values, const std::string &what);

class WeightTable {
public:
  // Adds a weight; a name already taken gets a numeric suffix. Returns the
  // name the weight was stored under.
  std::string add(Weight weight);
  const Weight *find(const std::string &name) const;
  const std::map<std::string, Weight> &all() const { return weights; }
  // Whether any weight is read on demand (see Weight::source).
  bool hasLazyWeights() const;
  // Every lazy weight's values read into `values`: for consumers of a whole
  // table (the reference interpreter) of a model small enough to hold.
  void materialize();

private:
  std::map<std::string, Weight> weights;
};

} // namespace mk

#endif
