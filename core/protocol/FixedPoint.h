/* Fixed64, the element of a buffer that several tasks add into (an Mlp's
 * output, core/taskgraph/TaskGraph.h): a signed count of 2^-32 in 64 bits.
 * Integer adds are exact and commute, so the sum has the same bits in
 * whatever order the tasks' adds land, on the GPU (atomics) as on the CPU,
 * where f32 atomics would not. A value is rounded to the nearest count
 * (ties to even) once, when it is added or stored; values of magnitude
 * 2^30 or more, and NaN, become +-2^62 (the sum of a few of them cannot
 * wrap). Read back, the sum is rounded to the nearest f32. Both engines
 * compute these the same way: g++ here, NVRTC in codegen/device/. */
#ifndef MKC_CORE_PROTOCOL_FIXEDPOINT_H
#define MKC_CORE_PROTOCOL_FIXEDPOINT_H

#include "core/protocol/Portable.h"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

/* A Gemv variant's "forms" bits (core/taskgraph/kinds/GemvKind.cpp): its
 * input, its residual are Fixed64; it seeds an Mlp's output; its input is
 * an attention's partials, merged as it loads them (mergesAttention,
 * core/taskgraph/TaskGraph.h). */
#define MK_GEMV_FIXED_INPUT 1
#define MK_GEMV_FIXED_RESIDUAL 2
#define MK_GEMV_SEEDS 4
#define MK_GEMV_MERGED_INPUT 8

namespace mk {

constexpr float kFixedPointOne = 4294967296.0f;             /* 2^32 counts */
constexpr float kFixedPointUnit = 2.3283064365386963e-10f;  /* 2^-32 */
constexpr float kFixedPointLimit = 1073741824.0f;           /* 2^30 */
constexpr mk_i64 kFixedPointSaturated = 4611686018427387904LL; /* 2^62 */

MK_HOST_DEVICE inline mk_i64 floatToFixed(float value) {
#ifdef __CUDA_ARCH__
  if (!(fabsf(value) < kFixedPointLimit))
    return value < 0.0f ? -kFixedPointSaturated : kFixedPointSaturated;
  return __float2ll_rn(value * kFixedPointOne);
#else
  if (!(std::fabs(value) < kFixedPointLimit))
    return value < 0.0f ? -kFixedPointSaturated : kFixedPointSaturated;
  return static_cast<mk_i64>(std::nearbyint(static_cast<double>(value) * kFixedPointOne));
#endif
}

MK_HOST_DEVICE inline float fixedToFloat(mk_i64 value) {
#ifdef __CUDA_ARCH__
  return __ll2float_rn(value) * kFixedPointUnit;
#else
  return static_cast<float>(value) * kFixedPointUnit;
#endif
}

} // namespace mk

#endif
