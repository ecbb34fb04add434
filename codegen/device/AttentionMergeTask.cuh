// AttentionMerge for KV head g (runtime/cpu/AttentionMergeTask.cpp): each q
// head of the group combines its chunks' (o, m, l) in chunk order 0, 1, ...,
// rescaled to the largest m: out = sum_c o_c exp(m_c - M) / sum_c l_c
// exp(m_c - M). Empty chunks (l = 0) are skipped, so -inf never meets -inf;
// the chunks past the one holding the step's position are all empty, so
// they are not even read.
//
// Load, compute and store per thread: one (head, dimension) each, reading
// every chunk's m and l (the same for the whole head, served by L1) and its
// o entry, kBatch chunks a round so that their loads are in flight together
// (all three in one round when the chunks in use fit one batch).
// The order is fixed, so every run gives the same bits. kBatch is 12, not
// 16: the merge's three arrays are where the whole kernel's registers peak
// (bench/register_peaks.py), and at 16 the builds with staged attention
// chunks spilled; the chunk counts measured (9 at 480 in a build for 528,
// 17 at 512 and 33 at 32736 in one for 32800) take as many rounds at 12.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"
#include "codegen/device/StepRows.cuh"

namespace mk::gpu {

// Element i of one step row's merge (a (head, dimension) of the group):
// `partials` and `out` are the row's (an idle row's output is zeros, as the
// CPU's).
template <int kHeadDim, int kGroup>
__device__ __forceinline__ void attentionMergeElement(const TaskContext &context,
                                                      const MkTaskRecord &task,
                                                      const MkOperationRecord &op,
                                                      const StepRow &row, const float *partials,
                                                      float *out, int i) {
  using Layout = AttentionShape<kHeadDim, kGroup>;
  const AttentionLayout layout = Layout::of(op);
  constexpr int kBatch = 12;
  unsigned long long group = task.begin;
  long long chunks = attentionWindowChunksInUse(row.position, op.window, op.chunksPerRound,
                                              op.numChunks, op.chunkSize);
  out += layout.query(group);
  if (!row.active) {
    out[i] = 0.0f;
    return;
  }
  int head = i / kHeadDim, d = i % kHeadDim;
  const float *headChunks = partials + layout.partial(group * kGroup + head, 0);
  // Chunk c's entry j, or `otherwise` past the last chunk read.
  auto entry = [&](long long c, int j, float otherwise) {
    return c < chunks ? headChunks[c * Layout::kPartialLength + j] : otherwise;
  };

  // A batch's m and l, and its o entries where `o` is asked for.
  auto loadBatch = [&](long long c0, float(&maxima)[kBatch], float(&sums)[kBatch], float *o) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      maxima[k] = entry(c0 + k, Layout::kMax, 0.0f);
      sums[k] = entry(c0 + k, Layout::kSum, 0.0f);
      if (o != nullptr)
        o[k] = entry(c0 + k, d, 0.0f);
    }
  };
  float max = negativeInfinity(), sum = 0.0f, weighted = 0.0f;
  auto raiseMax = [&](const float(&maxima)[kBatch], const float(&sums)[kBatch]) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (sums[k] != 0.0f)
        max = fmaxf(max, maxima[k]);
  };
  auto addBatch = [&](const float(&maxima)[kBatch], const float(&sums)[kBatch],
                      const float(&o)[kBatch]) {
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (sums[k] == 0.0f)
        continue;
      float scale = expf(maxima[k] - max);
      sum = fmaf(sums[k], scale, sum);
      weighted = fmaf(o[k], scale, weighted);
    }
  };
  float maxima[kBatch], sums[kBatch], o[kBatch];
  if (chunks <= kBatch) {
    // One batch (short positions: 9 chunks at 480 in a build for 528):
    // m, l and o asked for together, one round trip to L2, not two, on
    // the layer's critical path.
    loadBatch(0, maxima, sums, o);
    raiseMax(maxima, sums);
    addBatch(maxima, sums, o);
  } else {
    // The max over every chunk first, then the sums rescaled to it.
    for (long long c0 = 0; c0 < chunks; c0 += kBatch) {
      loadBatch(c0, maxima, sums, nullptr);
      raiseMax(maxima, sums);
    }
    for (long long c0 = 0; c0 < chunks; c0 += kBatch) {
      loadBatch(c0, maxima, sums, o);
      addBatch(maxima, sums, o);
    }
  }
  // NaN sums go on to the logits, where the argmax reports them.
  if (sum == 0.0f) {
    raiseError(context, MK_ERROR_EMPTY_ATTENTION, group * kGroup + head);
    return;
  }
  out[head * kHeadDim + d] = weighted / sum;
}

// The task: every row's elements at once, (row, element) pairs over the
// threads (a merge has no barrier and no shared memory, so a batch's rows
// need not go one after another).
template <int kHeadDim, int kGroup, int kStepRows, int kThreads, class AwaitInputs>
__device__ void attentionMergeTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op, const AwaitInputs &awaitInputs) {
  if (!awaitInputs())
    return;
  using Layout = AttentionShape<kHeadDim, kGroup>;
  const AttentionLayout layout = Layout::of(op);
  const unsigned long long partialsRow = layout.numHeads * layout.numChunks * Layout::kPartialLength;
  const unsigned long long outRow = layout.numHeads * kHeadDim;
  if constexpr (kStepRows == 1) {
    // One row: its elements over the threads, a loop the compiler may unroll.
    const StepRow row = stepRow<1>(context, 0);
    for (int i = threadIdx.x; i < Layout::kGroupLength; i += kThreads)
      attentionMergeElement<kHeadDim, kGroup>(context, task, op, row,
                                              context.activations + op.partials,
                                              context.activations + op.output, i);
  } else {
#pragma unroll 1
    for (unsigned item = threadIdx.x; item < kStepRows * Layout::kGroupLength; item += kThreads) {
      const unsigned r = item / Layout::kGroupLength;
      attentionMergeElement<kHeadDim, kGroup>(context, task, op, stepRow<kStepRows>(context, r),
                                              context.activations + op.partials + r * partialsRow,
                                              context.activations + op.output + r * outRow,
                                              item % Layout::kGroupLength);
    }
  }
}

} // namespace mk::gpu

#endif
