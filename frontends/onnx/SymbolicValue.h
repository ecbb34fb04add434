// What the importer knows about each ONNX value.
//
// The importer runs the ONNX graph abstractly for one decode step (batch 1,
// one new token, a concrete past length). Values that depend only on
// constants are folded to a Tensor. The rest are symbolic: the token, the
// position, the past KV caches, and activations, which are mk SSA values.
// Between an ONNX op and the mk op it means, partial facts are kept as
// symbolic kinds ("the mean of x squared", "x times cos(pos * f)"): a rule
// combines them, and only a complete meaning emits an mk op. This is how
// the importer matches on meaning instead of on exact node chains.
#ifndef MKC_FRONTENDS_ONNX_SYMBOLICVALUE_H
#define MKC_FRONTENDS_ONNX_SYMBOLICVALUE_H

#include "frontends/onnx/Tensor.h"

#include "mlir/IR/Value.h"

#include <memory>
#include <string>
#include <vector>

namespace mk::onnx_import {

enum class SymbolicKind {
  Constant,       // constant: a folded Tensor
  Token,          // input_ids
  Position,       // position_ids (integer, or after a Cast to float), plus positionOffset
  AttentionMask,  // the all-ones mask of length pos + 1, when positions come from it
  PastCache,      // past_key_values.N.key/value
  KvSequence,     // the past cache with this step's key or value appended
  Activation,     // an mk SSA value (a vector of the hidden stream, a head's q, ...)
  ScaledActivation, // an activation times a scalar, waiting for attention
  Square,         // x * x
  MeanSquare,     // mean(x * x) over the last axis
  MeanSquareEps,  // mean(x * x) + eps
  RootMeanSquare, // sqrt(mean(x * x) + eps)
  InverseRms,     // 1 / sqrt(mean(x * x) + eps)
  Normalized,     // x / sqrt(mean(x * x) + eps)
  Sigmoid,        // sigmoid(x)
  Silu,           // x * sigmoid(x)
  Angles,         // pos * freqs, freqs along the last axis
  Trig,           // amplitude * cos or sin of Angles
  RopeCos,        // x * cos(pos * freqs)
  HalfSlice,      // x[..., lo:hi] of the last axis
  NegatedSlice,   // -x[..., lo:hi]
  RotatedHalf,    // rotate_half(x) = concat(-x[h:], x[:h])
  RopeSin,        // rotate_half(x) * sin(pos * freqs)
  RotaryPrefix,   // rotary of each head's first entries, waiting for the rest (partial rotary)
  // GELU's tanh approximation, 0.5 x (1 + tanh(c (x + 0.044715 x^3))), as it
  // is built (GeluRules.cpp); `scale` is the factor in front of each.
  Cube,           // scale * x^3
  CubicSum,       // scale * (x + 0.044715 x^3)
  GeluTanh,       // scale * tanh(sqrt(2 / pi) (x + 0.044715 x^3))
  GeluOnePlus,    // scale * (1 + tanh(...))
  Gelu,           // scale * x * (1 + tanh(...)): GELU when scale is 0.5
  Scores,         // q . k for every cached position, times a scale
  Probabilities,  // softmax of Scores
  NanCheck,       // isnan(Probabilities)
};

struct SymbolicValue;
using Symbolic = std::shared_ptr<const SymbolicValue>;

struct SymbolicValue {
  SymbolicKind kind = SymbolicKind::Constant;
  // The ONNX shape this value has in the abstract run.
  std::vector<int64_t> shape;

  std::shared_ptr<const Tensor> constant; // Constant

  // The activation this value is built on (Activation and the partial kinds).
  mlir::Value value;
  int64_t axisSize = 0;   // MeanSquare..Normalized: length of the normalized axis;
                          // HalfSlice..RotatedHalf: the width of the axis sliced (the
                          // head dimension, or the rotated part of it);
                          // RopeCos, RotaryPrefix: the head dimension;
                          // PastCache, KvSequence: the number of KV heads
  float eps = 0.0f;       // MeanSquareEps..Normalized
  double scale = 1.0;     // ScaledActivation, KvSequence, Scores; Trig amplitude
  bool isFloat = false;   // Position: cast to a float type
  int64_t positionOffset = 0; // Position: the value is pos + positionOffset
  std::vector<float> freqs; // Angles, Trig, RopeCos, RopeSin; RotaryPrefix: inv_freq
  bool isCos = false;     // Trig
  int64_t lo = 0, hi = 0; // HalfSlice, NegatedSlice
  int64_t window = 0;     // Scores, Probabilities: a sliding window's length (0: none)

  // PastCache, KvSequence, Scores, Probabilities.
  int64_t layer = -1;
  bool isKey = false;
  // One letter per axis: '1' batch/unit, 'K' kv head, 'G' repeated group,
  // 'H' query head (K and G merged), 'T' time, 'D' head dim.
  std::string axes;
  mlir::Value newEntry;  // KvSequence: this step's key or value
  mlir::Value keyEntry;  // Scores, Probabilities: this step's key
  mlir::Value query;     // Scores, Probabilities

  int64_t numElements() const { return numElementsOf(shape); }
};

} // namespace mk::onnx_import

#endif
