// AttentionMerge for KV head g (runtime/cpu/AttentionMergeTask.cpp): each q
// head of the group combines its chunks' (o, m, l) in chunk order 0, 1, ...,
// rescaled to the largest m: out = sum_c o_c exp(m_c - M) / sum_c l_c
// exp(m_c - M). Empty chunks (l = 0) are skipped, so -inf never meets -inf.
//
// Load, compute and store per thread: one (head, dimension) each, reading
// every chunk's m and l (the same for the whole head, served by L1) and its
// o entry. The order is fixed, so every run gives the same bits.
#ifndef MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH
#define MKC_CODEGEN_DEVICE_ATTENTIONMERGETASK_CUH

#include "codegen/device/AttentionLayout.cuh"
#include "codegen/device/Common.cuh"

namespace mk::gpu {

template <int kHeadDim, int kGroup, int kThreads>
__device__ void attentionMergeTask(const TaskContext &context, const MkTaskRecord &task,
                                   const MkOperationRecord &op) {
  using Layout = AttentionLayout<kHeadDim, kGroup>;
  unsigned long long group = task.begin;
  const float *partials = context.activations + op.partials;
  float *out = context.activations + op.output + Layout::query(group);

  for (int i = threadIdx.x; i < Layout::kGroupLength; i += kThreads) {
    int head = i / kHeadDim, d = i % kHeadDim;
    const float *chunks = partials + Layout::partial(op, group * kGroup + head, 0);
    float max = negativeInfinity();
    for (long long c = 0; c < op.numChunks; ++c) {
      const float *partial = chunks + c * Layout::kPartialLength;
      if (partial[Layout::kSum] != 0.0f)
        max = fmaxf(max, partial[Layout::kMax]);
    }
    float sum = 0.0f, weighted = 0.0f;
    for (long long c = 0; c < op.numChunks; ++c) {
      const float *partial = chunks + c * Layout::kPartialLength;
      if (partial[Layout::kSum] == 0.0f)
        continue;
      float scale = expf(partial[Layout::kMax] - max);
      sum = fmaf(partial[Layout::kSum], scale, sum);
      weighted = fmaf(partial[d], scale, weighted);
    }
    // NaN sums go on to the logits, where the argmax reports them.
    if (sum == 0.0f) {
      raiseError(context, MK_ERROR_EMPTY_ATTENTION, group * kGroup + head);
      continue;
    }
    out[head * kHeadDim + d] = weighted / sum;
  }
}

} // namespace mk::gpu

#endif
