// Tensor-core operands from shared memory: the B fragments of
// mma.m16n8k16 (Common.cuh's mma16816) read by ldmatrix from rows of bf16
// keys and values, [position][dim], as the prompts' attention
// (PrefillAttention.cuh) and the decode's long chunks
// (AttentionChunkMma.cuh) stage them; and f32 pairs as a high and a low
// bf16 pair of A operands (a whole pair is Common.cuh's packBf16).
#ifndef MKC_CODEGEN_DEVICE_FRAGMENTS_CUH
#define MKC_CODEGEN_DEVICE_FRAGMENTS_CUH

#include "codegen/device/Common.cuh"

namespace mk::gpu {

// ldmatrix's four 8 x 8 tiles of bf16 from shared memory, each lane giving
// one row's address (`row`): as they are, or transposed.
template <bool kTransposed>
__device__ __forceinline__ void loadTiles(const unsigned short *row, unsigned (&b)[4]) {
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (kTransposed)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                 : "r"(address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                 : "r"(address));
#endif
}

// K's B fragments for one k16 step and two n8 tiles of S: the four 8 x 8
// tiles of K [key][dim] at keys n..n+7 and dims k and k + 8, then keys
// n+8..n+15 likewise.
__device__ __forceinline__ void loadKeyFragments(const unsigned short *keys, int stride, int key,
                                                 int dim, unsigned (&b)[4]) {
  const int lane = threadIdx.x % kWarpSize;
  loadTiles<false>(keys + (key + (lane & 7) + (lane >> 4) * 8) * stride + dim +
                       ((lane >> 3) & 1) * 8,
                   b);
}

// V's B fragments for one k16 step and two n8 tiles of o: the four 8 x 8
// tiles of V [key][dim], transposed, at rows k..k+7 and k+8..k+15 of dims n,
// then of dims n + 8.
__device__ __forceinline__ void loadValueFragments(const unsigned short *values, int stride,
                                                   int key, int dim, unsigned (&b)[4]) {
  const int lane = threadIdx.x % kWarpSize;
  loadTiles<true>(values + (key + (lane & 7) + ((lane >> 3) & 1) * 8) * stride + dim +
                      (lane >> 4) * 8,
                  b);
}

// Two floats as bf16 (the nearest, lower element in the low half), and what
// that leaves of them as bf16 too: their sum is the floats within 2^-16. An
// mma of each against bf16 operands, added, is an f32 operand's product to
// ~16 bits.
__device__ __forceinline__ void splitBf16(float low, float high, unsigned &value,
                                          unsigned &rest) {
  value = packBf16(low, high);
  rest = packBf16(low - bf16Low(value), high - bf16High(value));
}

} // namespace mk::gpu

#endif
