// AttentionMerge of the output elements [begin, end), q heads' dimensions
// (runtime/cpu/AttentionMergeTask.cpp): each element's q head combines its
// chunks' (o, m, l) in chunk order 0, 1, ..., rescaled to the largest m:
// out = sum_c o_c exp(m_c - M) / sum_c l_c exp(m_c - M). Empty chunks (l = 0)
// are skipped, so -inf never meets -inf; the chunks past the one holding
// the step's position are all empty, so they are not even read.
//
// Load, compute and store: each element (of a step row) by kLanes
// consecutive threads of one warp, lane q taking chunks q, q + kLanes, ...,
// kBatch a round trip to L2 (m, l and o asked for together), its sums
// rescaled to its running max as a larger one comes (as flash attention
// does); then the lanes' maxima meet by shuffles (exact) and their sums,
// rescaled to the largest, by a shuffle tree of fixed shape, so every run
// gives the same bits. A merge of one element a thread, each thread every
// chunk in two passes, took 12 round trips to L2 over 63 chunks (the
// Qwen2.5-1.5B shape at 4096: 13 us of its 25 us attention). kBatch is 8:
// the three arrays are where the whole kernel's registers peak
// (bench/register_peaks.py), and 8 lanes of 8 hold the 64 chunks of a round
// over 132 SMs of two KV heads.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"

namespace mk::gpu {

// The lanes an element takes: a power of two up to a warp, so that every
// thread has an element of a tile of MK_MERGE_TILE_ELEMENTS for each row.
__device__ constexpr int attentionMergeLanes(int threads, int elements) {
  int lanes = 1;
  while (lanes < kWarpSize && 2 * lanes * elements <= threads)
    lanes *= 2;
  return lanes;
}

// Output element `element` (a q head's dimension) of one step row, by the
// kLanes lanes of its group, each of which calls it (`inside` false: a
// group past the task's elements, which only joins the shuffles).
// `partials` and `out` are the row's (an idle row's output is zeros, as the
// CPU's).
template <int kHeadDim, int kGroup, int kLanes>
__device__ __forceinline__ void attentionMergeElement(const TaskContext &context,
                                                      const MkOperationRecord &op,
                                                      const StepRow &row, const float *partials,
                                                      float *out, unsigned element, bool inside) {
  using Layout = AttentionShape<kHeadDim, kGroup>;
  const AttentionLayout layout = Layout::of(op);
  constexpr int kBatch = 8;
  const int lane = threadIdx.x % kLanes;
  const unsigned head = element / kHeadDim, d = element % kHeadDim;
  const long long chunks =
      inside && row.active
          ? attentionWindowChunksInUse(row.position, op.window, op.chunksPerRound, op.numChunks,
                                       op.chunkSize)
          : 0;
  const float *headChunks = partials + layout.partial(head, 0);
  // Chunk c's entry j, or `otherwise` past the last chunk read.
  auto entry = [&](long long c, int j, float otherwise) {
    return c < chunks ? headChunks[c * Layout::kPartialLength + j] : otherwise;
  };
  // The lane's chunks of batch b: b * kBatch * kLanes + k * kLanes + lane.
  auto loadBatch = [&](long long b, float(&maxima)[kBatch], float(&sums)[kBatch],
                       float(&o)[kBatch]) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const long long c = (b * kBatch + k) * kLanes + lane;
      maxima[k] = entry(c, Layout::kMax, 0.0f);
      sums[k] = entry(c, Layout::kSum, 0.0f);
      o[k] = entry(c, d, 0.0f);
    }
  };
  // The lane's running max and its sums rescaled to it, batch by batch
  // (one batch, one round trip to L2, up to kBatch * kLanes chunks in use).
  float max = negativeInfinity(), sum = 0.0f, weighted = 0.0f;
  const long long batches = (chunks + kBatch * kLanes - 1) / (kBatch * kLanes);
#pragma unroll 1
  for (long long b = 0; b < batches; ++b) {
    float maxima[kBatch], sums[kBatch], o[kBatch];
    loadBatch(b, maxima, sums, o);
    float batchMax = max;
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (sums[k] != 0.0f)
        batchMax = fmaxf(batchMax, maxima[k]);
    if (batchMax != max) {
      const float rescale = expf(max - batchMax); // 0 while nothing was added
      sum *= rescale;
      weighted *= rescale;
      max = batchMax;
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (sums[k] == 0.0f)
        continue;
      const float scale = expf(maxima[k] - max);
      sum = fmaf(sums[k], scale, sum);
      weighted = fmaf(o[k], scale, weighted);
    }
  }
  // The lanes' sums rescaled to their common max, then added (a lane that
  // added nothing adds 0: its max may be -inf). Every lane of the warp is
  // here: the loop above is the only branch its groups take apart.
  const float common = groupMax<kLanes>(max);
  const float scale = sum != 0.0f ? expf(max - common) : 0.0f;
  sum = groupSum<kLanes>(sum * scale);
  weighted = groupSum<kLanes>(weighted * scale);
  if (!inside || lane != 0)
    return;
  if (!row.active) {
    out[element] = 0.0f;
    return;
  }
  // NaN sums go on to the logits, where the argmax reports them.
  if (sum == 0.0f) {
    raiseError(context, MK_ERROR_EMPTY_ATTENTION, head);
    return;
  }
  out[element] = weighted / sum;
}

// The task: every row's elements at once, (row, element) pairs over the
// lane groups (a merge has no barrier and no shared memory, so a batch's
// rows need not go one after another), in rounds that every thread takes.
template <int kHeadDim, int kGroup, int kStepRows, int kThreads, class AwaitInputs>
__device__ void attentionMergeTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
  using Layout = AttentionShape<kHeadDim, kGroup>;
  const AttentionLayout layout = Layout::of(op);
  constexpr int kTileElements =
      kHeadDim < MK_MERGE_TILE_ELEMENTS ? kHeadDim : MK_MERGE_TILE_ELEMENTS;
  constexpr int kLanes = attentionMergeLanes(kThreads, kStepRows * kTileElements);
  constexpr unsigned kGroups = kThreads / kLanes;
  static_assert(kThreads % kWarpSize == 0 && kWarpSize % kLanes == 0,
                "a lane group within a warp, whole warps of groups");
  const unsigned long long partialsRow = layout.numHeads * layout.numChunks * Layout::kPartialLength;
  const unsigned long long outRow = layout.numHeads * kHeadDim;
  const unsigned elements = static_cast<unsigned>(task.end - task.begin);
  const unsigned total = kStepRows * elements;
#pragma unroll 1
  for (unsigned first = 0; first < total; first += kGroups) {
    const unsigned item = first + threadIdx.x / kLanes;
    const bool inside = item < total;
    const unsigned r = inside ? item / elements : 0;
    attentionMergeElement<kHeadDim, kGroup, kLanes>(
        context, op, stepRow<kStepRows>(context, static_cast<int>(r)),
        context.activations + op.partials + r * partialsRow,
        context.activations + op.output + r * outRow,
        static_cast<unsigned>(task.begin) + (inside ? item % elements : 0), inside);
  }
}

} // namespace mk::gpu

#endif
