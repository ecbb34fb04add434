// The arithmetic of each mk op on plain f32 arrays, free of MLIR so that it
// reads like the op definitions in MkOps.td. Shapes are the caller's concern:
// the interpreter checks them once, before any kernel runs.
#ifndef MKC_CORE_KERNELS_KERNELS_H
#define MKC_CORE_KERNELS_KERNELS_H

#include <cstdint>
#include <span>
#include <vector>

namespace mk::kernels {

// The keys and values of one attention layer, laid out
// [position][kv head][head_dim].
class KVCache {
public:
  KVCache(int64_t capacity, int64_t numKvHeads, int64_t headDim);

  int64_t capacity() const { return positions; }
  int64_t numKvHeads() const { return kvHeads; }
  int64_t headDim() const { return dim; }

  // Stores all KV heads' key and value of position `pos`.
  void store(int64_t pos, std::span<const float> key, std::span<const float> value);
  std::span<const float> key(int64_t pos, int64_t kvHead) const;
  std::span<const float> value(int64_t pos, int64_t kvHead) const;

private:
  int64_t offset(int64_t pos, int64_t kvHead) const { return (pos * kvHeads + kvHead) * dim; }

  int64_t positions, kvHeads, dim;
  std::vector<float> keys, values;
};

// Sum of a[i] * b[i]. Each product of two floats is exact in double, and the
// sum is kept in double too, so the reference is closer to exact than any
// engine it is compared against.
double dot(std::span<const float> a, std::span<const float> b);

void rmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
             std::span<float> y);

void headRmsNorm(std::span<const float> x, std::span<const float> weight, float eps,
                 int64_t headDim, std::span<float> y);

// y = W x (+ bias), W laid out [y.size(), x.size()]; an empty bias is none.
void linear(std::span<const float> x, std::span<const float> weight,
            std::span<const float> bias, std::span<float> y);

struct RotaryConfig {
  int64_t headDim;
  int64_t rotaryDim;
  std::span<const float> invFreq; // rotaryDim / 2 entries
  bool interleaved;
};

void rotary(std::span<const float> x, const RotaryConfig &config, int64_t pos,
            std::span<float> y);

// Stores k, v into `cache` at `pos`, then each of the numHeads query heads
// attends over positions 0..pos of its KV head; with a sliding `window`,
// over the last `window` of them only.
void attention(std::span<const float> q, std::span<const float> k, std::span<const float> v,
               KVCache &cache, int64_t pos, int64_t numHeads, float scale, std::span<float> y,
               int64_t window = 0);

void siluMul(std::span<const float> gate, std::span<const float> up, std::span<float> y);
// gelu(gate) * up, GELU by its tanh approximation (mk.gelu_tanh_mul).
void geluTanhMul(std::span<const float> gate, std::span<const float> up, std::span<float> y);

void add(std::span<const float> lhs, std::span<const float> rhs, std::span<float> y);

// The lowest index among the largest values.
int64_t argmax(std::span<const float> x);

// The fused ops below are compositions of the kernels above, in the order
// the unfused ops run, so that they give the same floats.

enum class Epilogue { None, SiluMul, Residual, GeluTanhMul };

struct GemvConfig {
  std::vector<std::span<const float>> weights; // each [rows_i, x.size()]
  std::vector<std::span<const float>> biases;  // empty, or one per weight
  std::span<const float> norm;                 // empty: x is used as it is
  float eps = 0;
  Epilogue epilogue = Epilogue::None;
};

// mk.gemv: the optional norm of x, the stacked W_i x + b_i, then the
// epilogue; `residual` is read only by Epilogue::Residual.
void gemv(std::span<const float> x, const GemvConfig &config, std::span<const float> residual,
          std::span<float> y);

struct AttentionInputConfig {
  int64_t numHeads;
  std::span<const float> qNorm, kNorm; // empty: that input is not normalized
  float normEps;
  RotaryConfig rotary; // rotaryDim 0: no rotary
};

// mk.fused_attention: q | k | v split from `qkv`, q and k normalized and
// rotated, then attention().
void fusedAttention(std::span<const float> qkv, const AttentionInputConfig &config,
                    KVCache &cache, int64_t pos, float scale, std::span<float> y,
                    int64_t window = 0);

} // namespace mk::kernels

#endif
