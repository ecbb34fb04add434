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
  // The most positions one AttentionChunk task covers (attentionChunkSize;
  // less for groups whose scores would pass 64 KiB): a build whose context
  // one round of chunk tasks holds within it runs every step in one round;
  // past it, rounds, each a chunk's fixed cost again. Measured on the 1B
  // shape (bench/NOTES.md): 2048 against 1024, -5 to -6% at 16400-32700;
  // a build for 32800 cut into chunks of 2048 took two rounds from 32768 on
  // (2.10 ms against 1.50 at 32700), hence 4096 and sizes evened out.
  uint64_t longestAttentionChunk = 4096;
  // The fewest weight bytes a Gemv tile streams (`--least-gemv-tile-bytes`):
  // a Gemv of fewer bytes than numSms such tiles is cut into fewer tiles,
  // so that its phase has fewer triggers to count and fewer tasks that copy
  // its input. 0 (the default): every Gemv in numSms tiles. Measured slower
  // (bench/NOTES.md, 2026-12-07): a phase's fixed cost did not follow the
  // count of its tiles, and a larger tile streams at one SM's rate.
  uint64_t leastGemvTileBytes = 0;
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
  // Whether o_proj merges the attention chunks' partials as it loads its
  // input, so that a layer has no merge phase (`--merge-in-o-proj`;
  // core/taskgraph/TaskGraph.h: mergedByReader). Decode steps only.
  bool mergeInOProj = false;
  // Where o_proj is cut by q head instead (`--o-proj-by-head=on|auto|off`;
  // core/taskgraph/TaskGraph.h: projectsByHead): each task merges one head's
  // chunks and adds its rows' products with that head's columns into a
  // fixed64 output that the residual's producer seeds, so that a layer has
  // no merge phase and each chunk is read by its head's tasks only. Decode
  // steps only; an o_proj that cannot (a norm, a bias, no residual, heads
  // not a multiple of 8) keeps its merge tasks. On: wherever it can. Auto
  // (the default): where a tile's weights are at most
  // kByHeadMostAutoTileBytes, and not with another place for the merge or
  // --fuse-mlp. Measured on an H100 (bench/NOTES.md, item 19): SmolLM2's
  // tiles of 5 KiB -8% a token, Qwen3-0.6B's of 32 KiB -2.5%, the 1B
  // shape's of 64 KiB +2.5%, since a tile's weights start streaming only
  // when its SM's attention chunk ends.
  enum class ByHead { Off, Auto, On };
  ByHead oProjByHead = ByHead::Auto;
  static constexpr uint64_t kByHeadMostAutoTileBytes = 32 * 1024;

  // Whether o_proj is to be cut by q head where it can (Auto: where its
  // tiles are small enough, which the lowering decides).
  bool byHeadWanted() const {
    return oProjByHead == ByHead::On ||
           (oProjByHead == ByHead::Auto && !inlineMerge && !mergeInOProj && !fuseMlp);
  }
};

} // namespace mk

#endif
