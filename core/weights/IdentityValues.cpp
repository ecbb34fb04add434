#include "core/weights/IdentityValues.h"

namespace mk {

namespace {

class IdentityValues : public WeightValues {
public:
  explicit IdentityValues(uint64_t n) : n(n) {}

  // Element i is row i / n, column i % n: 1 on the diagonal.
  void read(uint64_t begin, uint64_t count, float *out) const override {
    for (uint64_t i = 0; i < count; ++i)
      out[i] = (begin + i) / n == (begin + i) % n ? 1.0f : 0.0f;
  }
  std::string identity() const override { return std::string(kIdentitySource) + std::to_string(n); }

private:
  uint64_t n;
};

} // namespace

std::string identityWeightName(uint64_t n) {
  return std::string(kIdentitySource) + "." + std::to_string(n);
}

bool isIdentityWeightName(const std::string &name) {
  return name.rfind(std::string(kIdentitySource) + ".", 0) == 0;
}

std::shared_ptr<const WeightValues> identityValues(uint64_t n) {
  return std::make_shared<IdentityValues>(n);
}

} // namespace mk
