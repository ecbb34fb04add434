// Values of a weight read on demand rather than held: a big model's weights
// are mapped from its file or generated, piece by piece, as the .mk is
// written, so that compiling never holds every weight as f32 at once.
#ifndef MKC_CORE_WEIGHTS_WEIGHTVALUES_H
#define MKC_CORE_WEIGHTS_WEIGHTVALUES_H

#include <cstdint>
#include <span>
#include <string>

namespace mk {

// Weights of at least this many elements are read on demand by the importers
// (mapped from an ONNX model's external data or a GGUF file) rather than
// decoded up front: 2^20 by default (4 MB of f32), so that every matrix of a
// real model is and the vectors and small constants the importers read are
// not. MKC_LAZY_WEIGHT_ELEMENTS=N sets another bound, for tests that read
// small fixtures both ways.
int64_t lazyWeightElements();

class WeightValues {
public:
  virtual ~WeightValues() = default;
  // Elements [begin, begin + count) of the weight's row-major values, widened
  // to f32, into `out`. The range lies inside the weight (the caller checks).
  // Throws std::runtime_error when the values cannot be read (an I/O error).
  virtual void read(uint64_t begin, uint64_t count, float *out) const = 0;
  // Called once a writer has read every value it needs: a mapped source lets
  // its pages go, so a multi-gigabyte model is not held resident.
  virtual void release() const {}
  // Identifies equal sources (the same initializer, the same layout), for the
  // importers' sharing of tied weights; "" when the values alone say.
  virtual std::string identity() const { return ""; }
  // The values as bf16 bits in memory, when the source is such a view (a
  // mapped .mk's WEIGHTS section): the CPU executor reads matrices there as
  // they are, without widening a copy. Empty otherwise.
  virtual std::span<const uint16_t> bf16Bits() const { return {}; }
};

} // namespace mk

#endif
