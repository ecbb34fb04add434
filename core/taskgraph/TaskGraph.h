// The task graph: one decode step of the fused mk IR cut into SM-sized tasks
// joined by events. It is plain data (no MLIR), so the scheduler, the
// validator, both executors, the code generator and `mkc inspect` all read
// the same thing. The event protocol is core/protocol/EventProtocol.h; what
// each task kind reads, writes and needs is its description
// (core/taskgraph/TaskKind.h).
#ifndef MKC_CORE_TASKGRAPH_TASKGRAPH_H
#define MKC_CORE_TASKGRAPH_TASKGRAPH_H

#include "core/protocol/TaskKindList.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// ---------------------------------------------------------------------------
// Buffers: where activations live between tasks. Element counts are f32
// elements, except Token (int64s: the tokens of the current step).
//
// A step holds TaskGraph::rows rows (docs/m-token-steps.md): each row has
// its own token, position and sequence, so one graph runs a decode step
// (one row), a prefill chunk (one sequence at consecutive positions) or a
// batch (a row per sequence). Activation and Scratch buffers hold `rows`
// rows of equal length, row r first at r * (elements / rows); the Token
// buffer one token per row; a KV cache `sequences` sequences of maxContext
// slots (core/taskgraph/StepRows.h).
// ---------------------------------------------------------------------------

enum class BufferKind : uint8_t {
  Activation, // one value of the fused IR per row, written once per step
  Scratch,    // task-to-task intermediates (attention partials), per row
  KVCache,    // [sequences][numKvHeads][maxContext][headDim] keys or values of a layer
  Token,      // the rows' tokens (read by Embed, written by Argmax)
};

// How a buffer keeps its values. BF16 (KV caches only): every engine
// rounds what a step writes to the nearest bf16 (ties to even) before any
// task reads it, and the GPU stores 2 bytes an element, half the bytes every
// later step reads. Fixed64 (an Activation that tasks add into: an Mlp's
// output): each value a signed count of 2^-32 in 64 bits
// (core/protocol/FixedPoint.h), so that its sum is exact and the same bits
// in whatever order the adds land; readers see it as f32.
enum class BufferElement : uint8_t { F32, BF16, Fixed64 };

inline uint64_t bytesPerElement(BufferElement element) {
  return element == BufferElement::BF16 ? 2 : element == BufferElement::Fixed64 ? 8 : 4;
}

struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::Activation;
  uint64_t elements = 0;
  BufferElement element = BufferElement::F32; // BF16 only for a KVCache, Fixed64 for an Activation
};

// Elements [begin, end) of a buffer. For a KVCache buffer, a range names
// elements of the step's rows' slots, row r's slot (at its sequence and
// position) being [r * slot, (r + 1) * slot) with slot = numKvHeads *
// headDim: see Task::reads for how caches are described.
struct BufferRange {
  uint32_t buffer = 0;
  uint64_t begin = 0, end = 0;
  friend bool operator==(const BufferRange &, const BufferRange &) = default;
};

// ---------------------------------------------------------------------------
// Operations: one per fused op; tasks are tiles of them.
// ---------------------------------------------------------------------------

enum class OpKind : uint8_t {
  Embed,     // out = table[token]
  Gemv,      // out = epilogue(concat_i(W_i * prologue(in) + b_i))
  Attention, // q/k head norm, rotary, KV write, split-K attention, merge
  Argmax,    // token = argmax(in), lowest index wins ties
  AllReduce, // out = residual + sum over ranks r = 0, 1, ... of in on rank r (tensor parallel)
  // out += W_down * (silu(W_gate * norm(in)) * (W_up * norm(in))), out a
  // Fixed64 buffer that the producer of the residual seeded (Operation::seed):
  // each task takes a slice of the intermediate channels through both
  // matrices, so the gated MLP is one phase instead of two
  // (compiler/taskgraph/LowerToTasks.cpp forms it with `--fuse-mlp`).
  Mlp,
};

enum class Epilogue : uint8_t {
  None,        // out[j] = y[j]
  SiluMul,     // out[j] = silu(y[j]) * y[N + j], two weights of N rows each
  Residual,    // out[j] = residual[j] + y[j]
  GeluTanhMul, // out[j] = gelu_tanh(y[j]) * y[N + j], as SiluMul (Gemma)
};

// A gated MLP's activation: two weights (gate, up) of N rows each, N outputs.
constexpr bool isGated(Epilogue epilogue) {
  return epilogue == Epilogue::SiluMul || epilogue == Epilogue::GeluTanhMul;
}

// A weight of the weight table, by name, with its shape.
struct WeightRef {
  std::string name;
  uint64_t rows = 0, cols = 0; // cols = 1 for vectors
};

// An operation field that names no buffer.
constexpr uint32_t kNoBuffer = 0xffffffffu;

struct Operation {
  OpKind kind = OpKind::Gemv;
  std::string name; // for reports, e.g. "layer3.qkv"
  int32_t layer = -1; // -1 outside the layers (embedding, lm_head, argmax)

  uint32_t input = 0;    // buffer read whole (Embed: the Token buffer)
  uint32_t output = 0;   // buffer written
  uint32_t residual = 0; // Gemv with Epilogue::Residual

  // Embed: the table [vocab, hidden]. Gemv: weights stacked by rows, each
  // [rows_i, K]; biases empty or one per weight. Mlp: gate [I, K], up
  // [I, K] and down [N, K = I], no biases.
  std::vector<WeightRef> weights;
  std::vector<WeightRef> biases;
  WeightRef norm; // Gemv prologue RMSNorm of the input when !norm.name.empty()
  float eps = 0.0f; // Gemv: of the prologue norm; Attention: of the q/k head norms
  Epilogue epilogue = Epilogue::None;
  uint64_t inputLength = 0;  // K
  uint64_t outputLength = 0; // rows of the output buffer

  // Attention. The input buffer holds q | k | v of this token.
  // An Attention whose output is its partials buffer has no merge tasks:
  // its reader, a Gemv (o_proj), merges the chunks' partials as it loads
  // its input (`mkc compile --merge-in-o-proj`: mergedByReader, below). That
  // Gemv's input is those partials, and it carries the attention's
  // numHeads, numKvHeads, headDim, chunkSize, numChunks, chunksPerRound
  // and window (mergesAttention).
  int64_t numHeads = 0, numKvHeads = 0, headDim = 0;
  float scale = 1.0f;
  WeightRef qNorm, kNorm; // per-head RMSNorm of q and k when named
  int64_t rotaryDim = 0;  // 0: no rotary
  std::vector<float> invFreq;
  bool interleaved = false;
  uint32_t keyCache = 0, valueCache = 0; // KVCache buffers
  uint32_t partials = 0; // Scratch [numHeads][numChunks][headDim + 2]: o, max, sum
  // A sliding window: a step attends to its last `window` positions only
  // (0: to every position up to it).
  int64_t window = 0;
  int64_t chunkSize = 0; // positions per AttentionChunk task (attentionChunkSize)
  int64_t numChunks = 0; // ceil(attentionReach(maxContext, window) / chunkSize)
  // The chunks a step spreads its positions over (attentionSpan): those of
  // a KV head that one round of chunk tasks over the SMs runs at once,
  // numSms / numKvHeads, at most numChunks.
  int64_t chunksPerRound = 0;

  // The logits' picks: the Gemv producing the logits (the lm_head) writes,
  // per tile and row, its largest logit and that logit's index (the lowest
  // among equals; a NaN value and the lowest index of a non-finite logit if
  // the tile has one), so that a greedy Argmax reads numPicks pairs instead
  // of the whole vocabulary. Both operations name the same Scratch buffer
  // [rows][numPicks][2]; a Gemv tile writes the pair at its Task::ordinal.
  uint32_t picks = kNoBuffer;
  int64_t numPicks = 0;

  // Mlp: the intermediate channels one task takes (a multiple of 8; the
  // last task may take fewer). A Gemv projecting by head
  // (projectsByHead): the output rows one HeadProjection task takes.
  int64_t sliceWidth = 0;

  // An Embed or a Gemv whose output is the residual of an operation adding
  // into a Fixed64 output (an Mlp, a Gemv projecting by head) also writes
  // its output rows there, as the value those tasks add into.
  uint32_t seed = kNoBuffer;
};

// ---------------------------------------------------------------------------
// Tasks and events
// ---------------------------------------------------------------------------

// Each kind's tile, what it reads and writes and what it needs: its
// description (core/taskgraph/kinds/). Opcodes: core/protocol/TaskKindList.h.
enum class TaskKind : uint8_t {
#define MK_TASK_KIND_ENUMERATOR(Name, NAME, opcode) Name = opcode,
  MK_TASK_KINDS(MK_TASK_KIND_ENUMERATOR)
#undef MK_TASK_KIND_ENUMERATOR
};

#define MK_TASK_KIND_COUNT(Name, NAME, opcode) +1
constexpr size_t kNumTaskKinds = 0 MK_TASK_KINDS(MK_TASK_KIND_COUNT);
#undef MK_TASK_KIND_COUNT

struct Wait {
  uint32_t event = 0;
  int32_t stepOffset = 0; // 0: this step; -1: the previous step
  // Tensor parallel (TaskGraph::ranks > 1): the event on every rank, not
  // only this one's. The ranks' graphs are alike but for their weights, so
  // an event's id names the same tasks on each.
  bool allRanks = false;
};

struct Task {
  uint32_t id = 0;
  TaskKind kind = TaskKind::Gemv;
  uint32_t op = 0; // index into TaskGraph::operations
  // The tile: rows for Embed/Gemv; for attention tasks `begin` is the KV head
  // and `end` the chunk index (AttentionChunk only).
  uint64_t begin = 0, end = 0;
  // Its index among its operation's tasks of its kind, in tile order (a
  // Gemv tile writing picks writes them at it).
  uint32_t ordinal = 0;
  // An inline task is in no queue: it runs on the SM whose trigger brings
  // its one wait's event to this step's count, right after that trigger
  // (the event protocol makes that trigger unique: every trigger of step
  // s + 1 follows every trigger of step s through the step's Argmax). So it
  // starts without a hop, and its waits and triggers mean what they mean
  // for a queued task (bench/NOTES.md: the merge in the last chunk).
  bool runsInline = false;

  std::vector<Wait> waits;
  uint32_t trigger = 0; // the one event this task adds to when done

  // What the task touches in one step, for the validator and for reports.
  // A KV cache entry written this step is the range of a row's slot,
  // expressed relative to the step's slots: [r * slot + head * headDim,
  // r * slot + (head + 1) * headDim) for row r. Reads of the positions
  // earlier steps filled are not listed: they were written by earlier steps.
  std::vector<BufferRange> reads, writes;
  // Elements the task adds into (an Mlp's output): written first in the
  // step by one task before it (the seed), read only after every task
  // adding into them; tasks adding into the same elements need no order.
  std::vector<BufferRange> accumulates;
  // Bytes of weights streamed (bf16 on the GPU): every weight element the
  // task reads, times kBytesPerStreamedWeight (the validator checks it). A Gemv tile reads
  // its rows of each stacked matrix and bias and the whole norm vector; an
  // Embed tile its part of one table row; AttentionChunk the q/k norm
  // vectors.
  uint64_t weightBytes = 0;
};

// Weights are streamed as bf16, on the GPU and in the .mk.
constexpr uint64_t kBytesPerStreamedWeight = 2;

struct Event {
  uint32_t id = 0;
  std::string name;
  uint32_t triggerCount = 0; // how many tasks trigger it per step
};

struct TaskGraph {
  int64_t maxContext = 0;
  int64_t rows = 1;      // of a step: 1 for decode (see Buffers above)
  int64_t sequences = 1; // the KV caches hold this many
  // Tensor parallel: this graph is rank `rank` of `ranks`, each holding its
  // share of the heads and channels (compiler/taskgraph/ShardOperations.h).
  int64_t ranks = 1, rank = 0;
  std::vector<Buffer> buffers;
  std::vector<Operation> operations;
  std::vector<Task> tasks; // in a valid sequential order (a topological order)
  std::vector<Event> events;
  uint32_t tokenBuffer = 0;
  uint32_t logitsBuffer = 0;
};

// An Attention merged by its reader: no AttentionMerge tasks, the chunks
// trigger its output event, and its output is its partials.
inline bool mergedByReader(const Operation &op) {
  return op.kind == OpKind::Attention && op.output == op.partials;
}

// A Gemv that merges an attention's partials as its input (its fields as
// the attention's: see Operation).
inline bool mergesAttention(const Operation &op) {
  return op.kind == OpKind::Gemv && op.numHeads > 0;
}

// A Gemv merging an attention head by head (`mkc compile --o-proj-by-head`):
// its HeadProjection tasks each take one q head's columns of its weight and
// some of its rows, merge that head's chunks and add the rows' products
// into the Fixed64 output, which the producer of the residual seeded. So a
// layer has no merge phase, and every chunk's partials are read by the
// tasks of one head only (core/taskgraph/kinds/HeadProjectionKind.cpp).
inline bool projectsByHead(const Operation &op) {
  return mergesAttention(op) && op.sliceWidth > 0;
}

// What of an attention a Gemv merging it carries, in one place for the
// lowering that copies it and the validator that compares it.
struct AttentionGeometry {
  int64_t numHeads, numKvHeads, headDim, chunkSize, numChunks, chunksPerRound, window;
  friend bool operator==(const AttentionGeometry &, const AttentionGeometry &) = default;
};

inline AttentionGeometry attentionGeometry(const Operation &op) {
  return {op.numHeads,  op.numKvHeads,     op.headDim, op.chunkSize,
          op.numChunks, op.chunksPerRound, op.window};
}

inline void setAttentionGeometry(Operation &op, const AttentionGeometry &geometry) {
  op.numHeads = geometry.numHeads;
  op.numKvHeads = geometry.numKvHeads;
  op.headDim = geometry.headDim;
  op.chunkSize = geometry.chunkSize;
  op.numChunks = geometry.numChunks;
  op.chunksPerRound = geometry.chunksPerRound;
  op.window = geometry.window;
}

// Whether `buffer` names a buffer of the graph that keeps Fixed64 values
// (false for an index out of range, so that checks of unvalidated graphs
// may ask first).
inline bool keepsFixed64(const TaskGraph &graph, uint32_t buffer) {
  return buffer < graph.buffers.size() && graph.buffers[buffer].element == BufferElement::Fixed64;
}

// The static schedule: the tasks each SM runs, in order, every step.
struct Schedule {
  uint32_t numSms = 0;
  std::vector<std::vector<uint32_t>> queues; // task ids per SM
};

// A task graph with its schedule: what one kind of step runs (decode, a
// prefill chunk, a batch).
struct ScheduledGraph {
  TaskGraph graph;
  Schedule schedule;
};

} // namespace mk

#endif
