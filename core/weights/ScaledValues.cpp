#include "core/weights/ScaledValues.h"

#include <cstdio>
#include <string>

namespace mk {

namespace {

class ScaledValues final : public WeightValues {
public:
  ScaledValues(std::shared_ptr<const WeightValues> source, double factor)
      : source(std::move(source)), factor(factor) {}

  void read(uint64_t begin, uint64_t n, float *out) const override {
    source->read(begin, n, out);
    for (uint64_t i = 0; i < n; ++i)
      out[i] = static_cast<float>(out[i] * factor);
  }

  void release() const override { source->release(); }

  std::string identity() const override {
    std::string inner = source->identity();
    if (inner.empty())
      return "";
    char text[40];
    std::snprintf(text, sizeof(text), "*%.17g", factor);
    return inner + text;
  }

private:
  std::shared_ptr<const WeightValues> source;
  double factor;
};

} // namespace

std::shared_ptr<const WeightValues> scaledValues(std::shared_ptr<const WeightValues> source,
                                                 double factor) {
  return std::make_shared<ScaledValues>(std::move(source), factor);
}

std::string factorText(double factor) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", factor);
  return text;
}

std::string scaledWeightName(const std::string &name, double factor) {
  return name + ".times" + factorText(factor);
}

} // namespace mk
