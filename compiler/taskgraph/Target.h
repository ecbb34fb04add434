// What the compiler knows of the machine it compiles for: enough to size
// tasks so that every SM streams about the same bytes.
#ifndef MKC_COMPILER_TASKGRAPH_TARGET_H
#define MKC_COMPILER_TASKGRAPH_TARGET_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>

namespace mk {

struct TargetDescription {
  std::string name = "h200";
  uint32_t numSms = 132;
  uint64_t sharedMemoryPerSm = 227 * 1024; // usable by one CTA
  uint32_t bytesPerWeight = kBytesPerStreamedWeight;
  uint64_t memoryBandwidth = 4'550'000'000'000; // bytes/s, measured streaming rate
  // The most positions one AttentionChunk task covers (attentionChunkSize):
  // shorter chunks give a long context more chunk tasks than SMs, run in
  // rounds, each round a chunk's fixed cost again. 2048 lets a step of up
  // to 16 x 2048 positions spread over one round (bench/NOTES.md: -5 to -6%
  // at 16400-32700 on the 1B shape against 1024, nothing at 1).
  uint64_t longestAttentionChunk = 2048;
  // How the KV caches keep their values (`--kv-cache`). BF16 halves the
  // bytes a long context reads every step; F32 keeps the step's k and v as
  // computed.
  BufferElement kvCache = BufferElement::F32;
  // Whether the logits' Gemv writes its tiles' picks for a greedy Argmax
  // (Operation::picks; `--no-logit-picks` leaves them out).
  bool logitPicks = true;
  // Whether each attention merge runs inline, on the SM of its KV head's
  // last chunk (`--inline-merge`; compiler/taskgraph/InlineTasks.h).
  bool inlineMerge = false;
  // Whether a gated MLP (gate_up, then down adding the residual) is lowered
  // to one Mlp operation: each task takes a slice of the intermediate
  // channels through both matrices and adds into a fixed64 output, one
  // phase where there were two (`--fuse-mlp`; core/taskgraph/TaskGraph.h).
  bool fuseMlp = false;
};

} // namespace mk

#endif
