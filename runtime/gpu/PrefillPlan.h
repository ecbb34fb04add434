// What a prompt runs layer by layer on the GPU (runtime/gpu/Prefill.h),
// planned from the decode task graph alone, so that it is tested without
// a GPU: the operations in order (the logits and the argmax only when the
// caller wants logits), which of them hand the next Gemv its GEMM input
// directly, and where each activation buffer lives in the prompt's arena. A buffer holds `rows` rows of its decode row's length; a
// buffer's space is reused once its last reader has run, so the arena holds
// the few buffers alive at once, not all of a model's.
#ifndef MKC_RUNTIME_GPU_PREFILLPLAN_H
#define MKC_RUNTIME_GPU_PREFILLPLAN_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct PrefillPlan {
  std::vector<uint32_t> operations;     // indices into graph.operations, in order
  // Per buffer of the graph: its start in the arena, in f32 elements per
  // row (buffer b of a run of R rows starts at arenaOffset[b] * R floats);
  // kNoOffset for buffers the plan never holds.
  static constexpr uint64_t kNoOffset = ~uint64_t(0);
  std::vector<uint64_t> arenaOffset;
  std::vector<uint64_t> rowLength;      // per buffer: its decode row's elements
  uint64_t arenaFloatsPerRow = 0;
  uint64_t gemmInputPerRow = 0;         // bf16 elements: the longest Gemv input
  uint64_t gemmOutputPerRow = 0;        // f32 elements: the widest Gemv's stacked rows
  uint64_t queriesPerRow = 0;           // bf16 elements: the widest attention's q heads
  uint32_t logits = kNoBuffer;          // the logits' buffer, when planned with them
  // Per entry of `operations`: whether it also writes the GEMM input of the
  // next entry, a Gemv without a norm that reads its output (as bf16),
  // which then skips its own conversion launch: a Gemv with a bias or a
  // SiLU-mul (its epilogue kernel does it; without either the GEMMs write
  // the output, adding a residual themselves), or an attention. And whether it writes its f32 output at all:
  // not when that Gemv is the output's only reader.
  std::vector<uint8_t> feedsNextGemm, writesOutput;
};

// The decode graph's buffers and operations as a prompt runs them, whole
// operations over many rows: an attention merged by its reader
// (mergedByReader) writes its output to a buffer of its own, which its
// reader then reads as a plain input; a Gemv projecting by head
// (projectsByHead) is a plain Gemv adding its residual itself, the buffer
// whose producer seeds its fixed64 output; no operation seeds, and every
// activation is f32. The buffers keep their indices (a new one comes last);
// the records of the schedule blob still describe the operations' weights.
TaskGraph promptGraph(const TaskGraph &decode);

// The plan, or "" with `error` saying why the graph cannot run this way: a
// step of more than one row, an operation kind without a prompt kernel (an
// Mlp, an all-reduce), no Embed first.
bool planPrefill(const TaskGraph &graph, bool withLogits, PrefillPlan &plan, std::string &error);

} // namespace mk

#endif
