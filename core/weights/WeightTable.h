// The model's weights, by name, as the compiler holds them: values widened to
// f32 for the reference interpreter, with the dtype they are stored in.
#ifndef MKC_CORE_WEIGHTS_WEIGHTTABLE_H
#define MKC_CORE_WEIGHTS_WEIGHTTABLE_H

#include <cstdint>
#include <map>
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

  int64_t numElements() const;
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

private:
  std::map<std::string, Weight> weights;
};

} // namespace mk

#endif
