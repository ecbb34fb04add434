// What every task of the persistent kernel shares: the view of one running
// task (TaskContext), bf16 widening, the loads that bypass L1 for weights,
// reductions, and the error word. No CUDA headers: NVRTC compiles this with
// nothing but its built-ins.
#ifndef MKC_CODEGEN_DEVICE_COMMON_CUH
#define MKC_CODEGEN_DEVICE_COMMON_CUH

#include "runtime/format/ControlBlock.h"
#include "runtime/format/ScheduleBlob.h"

// The ranks of tensor parallelism the kernel runs (docs/tensor-parallel.md),
// set by the generated source before it includes the library: 1, one GPU,
// unless it says otherwise.
#ifndef MK_RANKS
#define MK_RANKS 1
#endif
// 1: weights are read with L2's evict-first policy (KernelOptions::
// weightsEvictFirst), set by the generated source like MK_RANKS.
#ifndef MK_WEIGHTS_EVICT_FIRST
#define MK_WEIGHTS_EVICT_FIRST 0
#endif
// 1: long attention chunks of bf16 caches run their arithmetic on tensor
// cores (KernelOptions::chunkTensorCores; AttentionChunkMma.cuh).
#ifndef MK_CHUNK_TENSOR_CORES
#define MK_CHUNK_TENSOR_CORES 0
#endif

namespace mk::gpu {

constexpr int kWarpSize = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRanks = MK_RANKS;
// The positions of every KV head in a sequence's slots of a cache (the
// compiled maxContext: core/protocol/AttentionLayout.h's cacheEntry), set
// by the generated source, which always defines it (the loader keeps the
// compiled layout whatever context it is asked for); a host test of the
// library that names no cache leaves it out, and then code that reads a
// cache does not compile.
#ifdef MK_KV_CAPACITY
constexpr unsigned long long kKvCapacity = MK_KV_CAPACITY;
#endif
static_assert(kRanks >= 1 && kRanks <= MK_MAX_RANKS, "the ranks an MkRanks describes");

// Everything a task function reads or writes, resolved once per launch.
struct TaskContext {
  const MkBlobHeader *header;
  const MkQueue *queues;
  const MkQueueEntry *entries;
  const MkTaskRecord *tasks;
  const MkWaitRecord *waits; // those past a queue entry's MK_ENTRY_WAITS
  const MkEventRecord *events;
  const float *params;
  const unsigned short *weights; // bf16 bits
  float *activations;
  float *kv;
  unsigned *counters;
  MkControlBlock *control;
  float *shared; // the dynamic shared memory, sized by the generator
  // The weight ring (WeightRing.cuh) in shared memory, or nullptr, and the
  // position of the running task's first slot there.
  unsigned char *ring;
  unsigned long long ringPosition;
  long long step;
  long long position;
  unsigned taskId;
};

__device__ __forceinline__ float negativeInfinity() { return __int_as_float(0xff800000); }

// A gated epilogue's activation of its gate sum, as core/kernels/Kernels.cpp
// computes it: silu, or GELU's tanh approximation (Gemma).
template <int kEpilogue> __device__ __forceinline__ float gateActivation(float gate) {
  static_assert(MK_EPILOGUE_GATED(kEpilogue), "a gated epilogue");
  if constexpr (kEpilogue == MK_EPILOGUE_GELU_TANH_MUL) {
    constexpr float kInner = 0.7978845608028654f; // sqrt(2 / pi)
    return 0.5f * gate * (1.0f + tanhf(kInner * (gate + 0.044715f * gate * gate * gate)));
  } else {
    return gate / (1.0f + expf(-gate));
  }
}

__device__ __forceinline__ bool isFinite(float value) {
  return (__float_as_uint(value) & 0x7f800000u) != 0x7f800000u;
}

// A bf16 is the top half of an f32: widening is a shift, exact.
__device__ __forceinline__ float bf16Low(unsigned pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float bf16High(unsigned pair) { return __uint_as_float(pair & 0xffff0000u); }
__device__ __forceinline__ float bf16ToFloat(unsigned short bits) {
  return __uint_as_float(static_cast<unsigned>(bits) << 16);
}
// The nearest bf16, ties to even, a NaN kept quiet: the same bits as the
// host's toBf16 (runtime/format/Bf16.h), so that every engine keeps the
// same KV cache.
__device__ __forceinline__ unsigned short floatToBf16(float value) {
  unsigned bits = __float_as_uint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<unsigned short>((bits >> 16) | 0x0040u);
  return static_cast<unsigned short>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// A KV cache element: f32 (4 bytes) or bf16 (2), read as f32.
template <int kCacheBytes> struct BufferElementOf;
template <> struct BufferElementOf<4> {
  using Type = float;
  __device__ static float read(float value) { return value; }
  __device__ static float write(float value) { return value; }
  __device__ static float round(float value) { return value; }
};
template <> struct BufferElementOf<2> {
  using Type = unsigned short;
  __device__ static float read(unsigned short bits) { return bf16ToFloat(bits); }
  __device__ static unsigned short write(float value) { return floatToBf16(value); }
  __device__ static float round(float value) { return bf16ToFloat(floatToBf16(value)); }
};

// A 16-byte unit of cache elements (or, for f32 rows not of whole units,
// kElements elements) as floats.
template <int kCacheBytes, int kElements>
__device__ __forceinline__ void readUnit(const typename BufferElementOf<kCacheBytes>::Type *from,
                                         float (&out)[kElements]) {
  if constexpr (kElements * kCacheBytes == 16) {
    uint4 bits = *reinterpret_cast<const uint4 *>(from);
    const unsigned words[4] = {bits.x, bits.y, bits.z, bits.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (kCacheBytes == 2) {
        out[2 * i] = bf16ToFloat(static_cast<unsigned short>(words[i]));
        out[2 * i + 1] = bf16ToFloat(static_cast<unsigned short>(words[i] >> 16));
      } else {
        out[i] = __uint_as_float(words[i]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kElements; ++i)
      out[i] = BufferElementOf<kCacheBytes>::read(from[i]);
  }
}

// Two floats as one bf16 pair, the first in the low half.
__device__ __forceinline__ unsigned packBf16(float low, float high) {
  unsigned pair = 0;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(pair) : "f"(high), "f"(low));
#endif
  return pair;
}

// D += A B for one m16n8k16 (bf16 in, f32 out): the fragments as the PTX
// ISA lays them out for lane (group g = lane / 4, t = lane % 4).
__device__ __forceinline__ void mma16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                         unsigned a3, unsigned b0, unsigned b1) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

// The L2 policy of weight reads. A token streams every weight through L2
// once, so with the default policy the weights push out what the next step
// reads again: the KV cache, the activations, the events. Evict-first
// makes the weights L2's first victims (createpolicy: one register,
// computed where it is used and folded by the compiler).
__device__ __forceinline__ unsigned long long weightCachePolicy() {
  unsigned long long policy = 0;
#if __CUDA_ARCH__ >= 800
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}

// Eight bf16 weights in one 16-byte load. Weights never change during a
// launch, so the non-coherent path is safe, and each byte is read once, so
// it need not displace activations from L1.
__device__ __forceinline__ uint4 loadWeights8(const unsigned short *address) {
  uint4 value;
#if MK_WEIGHTS_EVICT_FIRST && __CUDA_ARCH__ >= 800
  asm("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
      : "l"(address), "l"(weightCachePolicy()));
#else
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
      : "l"(address));
#endif
  return value;
}

// 16 bytes from global into shared memory without holding a register:
// cp.async (sm_80 on), completed by copyWait() for the thread's own copies.
// Zeros when `inside` is false (source size 0: nothing is read).
__device__ __forceinline__ void copyAsync16(void *sharedTarget, const void *source, bool inside) {
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(sharedTarget));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(source),
               "r"(inside ? 16 : 0)
               : "memory");
#else
  *reinterpret_cast<uint4 *>(sharedTarget) =
      inside ? *reinterpret_cast<const uint4 *>(source) : make_uint4(0, 0, 0, 0);
#endif
}

// copyAsync16 for weights: with the weights' L2 policy (weightCachePolicy).
__device__ __forceinline__ void copyWeightsAsync16(void *sharedTarget, const void *source,
                                                   bool inside) {
#if MK_WEIGHTS_EVICT_FIRST && __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(sharedTarget));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;" ::"r"(address),
               "l"(source), "r"(inside ? 16 : 0), "l"(weightCachePolicy())
               : "memory");
#else
  copyAsync16(sharedTarget, source, inside);
#endif
}

// The same for 8 and 4 bytes (cp.async.ca: sizes under 16 go through L1).
__device__ __forceinline__ void copyAsync8(void *sharedTarget, const void *source) {
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(sharedTarget));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(address), "l"(source) : "memory");
#else
  *reinterpret_cast<unsigned long long *>(sharedTarget) =
      *reinterpret_cast<const unsigned long long *>(source);
#endif
}

__device__ __forceinline__ void copyAsync4(void *sharedTarget, const void *source) {
#if __CUDA_ARCH__ >= 800
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(sharedTarget));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(address), "l"(source) : "memory");
#else
  *reinterpret_cast<float *>(sharedTarget) = *reinterpret_cast<const float *>(source);
#endif
}

__device__ __forceinline__ void copyWait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// Closes the thread's copies issued since the last commit into a group.
__device__ __forceinline__ void copyCommit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most kPending of the thread's committed groups are in
// flight.
template <int kPending>
__device__ __forceinline__ void copyWaitAllBut() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long nanoseconds;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(nanoseconds));
  return nanoseconds;
}

// Sums over groups of kLanes consecutive lanes (a power of two up to 32);
// every lane of the warp must call it.
template <int kLanes>
__device__ __forceinline__ float groupSum(float value) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(kFullMask, value, offset);
  return value;
}

__device__ __forceinline__ float warpSum(float value) { return groupSum<kWarpSize>(value); }

// The max over groups of kLanes consecutive lanes, as groupSum.
template <int kLanes>
__device__ __forceinline__ float groupMax(float value) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(kFullMask, value, offset));
  return value;
}

__device__ __forceinline__ float warpMax(float value) { return groupMax<kWarpSize>(value); }

// The barrier of the kThreads threads that run tasks (the consumers):
// named barrier 1, which the weight ring's producer warp, outside it, never
// joins. Tasks use it wherever they need the CTA's threads together.
template <int kThreads>
__device__ __forceinline__ void consumerSync() {
#ifdef __CUDA_ARCH__
  asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
#endif
}

// The sum over the block, returned to every thread. Two barriers: the
// scratch is reused by the next call.
template <int kThreads>
__device__ float blockSum(float value) {
  constexpr int kWarps = kThreads / kWarpSize;
  __shared__ float partials[kWarps];
  value = warpSum(value);
  int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  if (lane == 0)
    partials[warp] = value;
  consumerSync<kThreads>();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    total += partials[w];
  consumerSync<kThreads>();
  return total;
}

__device__ __forceinline__ unsigned loadRelaxed(const unsigned *address) {
  unsigned value;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

// Records the first error of the launch; later ones are dropped so that the
// host sees the cause, not its consequences.
__device__ inline void raiseError(const TaskContext &context, unsigned code, long long detail,
                                  unsigned event = 0xffffffffu) {
  MkControlBlock *control = context.control;
  if (atomicCAS(&control->error, 0u, code) != 0u)
    return;
  control->errorStep = context.step;
  control->errorTask = context.taskId;
  control->errorEvent = event;
  control->errorSm = blockIdx.x;
  control->errorDetail = detail;
  __threadfence();
}

// Each thread's elements [threadIdx.x + j * kThreads), j < kPerThread,
// visited a batch at a time: the batch's global loads are all issued before
// any shared store, past which the compiler may not move them (it cannot
// always tell that the two do not alias), so that the input costs one round
// trip to L2 per batch rather than one per element.
template <int kInput, int kThreads, class Load, class Use>
__device__ __forceinline__ void forEachInBatches(Load load, Use use) {
  constexpr int kPerThread = (kInput + kThreads - 1) / kThreads;
  constexpr int kBatch = kPerThread < 8 ? kPerThread : 8;
  for (int base = 0; base < kPerThread; base += kBatch) {
    float values[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int i = threadIdx.x + (base + b) * kThreads;
      values[b] = i < kInput ? load(i) : 0.0f;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      int i = threadIdx.x + (base + b) * kThreads;
      if (i < kInput)
        use(i, values[b]);
    }
  }
}

// sum + the dot product of 8 bf16 weights (a 16-byte chunk) with x0 and x1,
// in element order.
__device__ __forceinline__ float dot8(uint4 w, float4 x0, float4 x1, float sum) {
  sum = fmaf(bf16Low(w.x), x0.x, sum);
  sum = fmaf(bf16High(w.x), x0.y, sum);
  sum = fmaf(bf16Low(w.y), x0.z, sum);
  sum = fmaf(bf16High(w.y), x0.w, sum);
  sum = fmaf(bf16Low(w.z), x1.x, sum);
  sum = fmaf(bf16High(w.z), x1.y, sum);
  sum = fmaf(bf16Low(w.w), x1.z, sum);
  return fmaf(bf16High(w.w), x1.w, sum);
}

// Row `row` of a gemv's weights stacked by rows, each `input` long: which
// of the operation's weights holds it, and where. nullptr past the last
// weight.
__device__ __forceinline__ const unsigned short *stackedRowOf(const TaskContext &context,
                                                              const MkOperationRecord &op,
                                                              unsigned long long row,
                                                              unsigned long long input) {
  unsigned long long first = 0;
  for (int i = 0; i < op.numWeights; ++i) {
    if (row < first + op.weightRows[i])
      return context.weights + op.weights[i] + (row - first) * input;
    first += op.weightRows[i];
  }
  return nullptr;
}

template <int kInput>
__device__ __forceinline__ const unsigned short *
stackedRow(const TaskContext &context, const MkOperationRecord &op, unsigned long long row) {
  return stackedRowOf(context, op, row, kInput);
}

} // namespace mk::gpu

#endif
