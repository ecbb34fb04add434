// How a step's rows lay out in the task graph's buffers (TaskGraph.h): the
// one place that says where row r of a buffer starts, how long a KV slot
// is, and what a range of a KV cache is relative to. The kinds' footprints,
// the validator and the CPU executor all index through it.
#ifndef MKC_CORE_TASKGRAPH_STEPROWS_H
#define MKC_CORE_TASKGRAPH_STEPROWS_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mk {

// What a graph's step holds: `rows` rows, and KV caches for `sequences`
// sequences. Decode is {1, 1}; a prefill chunk of M tokens {M, 1}; a batch
// of B sequences {B, B}.
struct StepShape {
  int64_t rows = 1;
  int64_t sequences = 1;
};

// The most rows a step may hold: a prefill chunk or a batch, never a prompt.
constexpr int64_t kMaxStepRows = 1024;

// Whether `graph`'s step is a batch: a row per sequence, several sequences.
inline bool isBatchStep(const TaskGraph &graph) {
  return graph.sequences > 1 && graph.rows == graph.sequences;
}

// Elements of one row of an Activation or Scratch buffer (a validated graph
// has elements divisible by rows).
inline uint64_t rowLength(const TaskGraph &graph, const Buffer &buffer) {
  return buffer.elements / static_cast<uint64_t>(graph.rows);
}

// Elements of one position's slot of a KV cache.
inline uint64_t slotLength(const TaskGraph &graph, const Buffer &cache) {
  return cache.elements / static_cast<uint64_t>(graph.sequences * graph.maxContext);
}

// The elements a range of the buffer is counted in: for a KV cache the
// step's rows' slots, row after row (Task::reads), else the buffer itself.
inline uint64_t rangeExtent(const TaskGraph &graph, const Buffer &buffer) {
  if (buffer.kind == BufferKind::KVCache)
    return static_cast<uint64_t>(graph.rows) * slotLength(graph, buffer);
  if (buffer.kind == BufferKind::Token)
    return static_cast<uint64_t>(graph.rows);
  return buffer.elements;
}

// Appends [begin, begin + length) of every row of a buffer whose rows are
// `stride` elements apart (rowLength, slotLength, or 1 for the tokens).
inline void addRowRanges(std::vector<BufferRange> &ranges, const TaskGraph &graph,
                         uint32_t buffer, uint64_t stride, uint64_t begin, uint64_t length) {
  for (uint64_t row = 0; row < static_cast<uint64_t>(graph.rows); ++row)
    ranges.push_back({buffer, row * stride + begin, row * stride + begin + length});
}

// The same with the stride of an Activation or Scratch buffer.
inline void addRowRanges(std::vector<BufferRange> &ranges, const TaskGraph &graph,
                         uint32_t buffer, uint64_t begin, uint64_t length) {
  addRowRanges(ranges, graph, buffer, rowLength(graph, graph.buffers[buffer]), begin, length);
}

// Whether `graph` can run on the KV caches of `owner` (a prefill graph on
// its decode graph's): the same context and sequences, and the same KVCache
// buffers, known by their names (a layer's), with the same sizes. Their
// indices may differ: a decode graph projecting by head has no merged
// attention outputs, which a prefill graph keeps.
inline bool sharesKvCaches(const TaskGraph &graph, const TaskGraph &owner) {
  if (graph.maxContext != owner.maxContext || graph.sequences != owner.sequences)
    return false;
  // Each graph's caches by name; false when a name is taken twice.
  auto caches = [](const TaskGraph &of, std::map<std::string, uint64_t> &elements) {
    for (const Buffer &buffer : of.buffers)
      if (buffer.kind == BufferKind::KVCache && !elements.emplace(buffer.name, buffer.elements).second)
        return false;
    return true;
  };
  std::map<std::string, uint64_t> mine, theirs;
  return caches(graph, mine) && caches(owner, theirs) && mine == theirs;
}

} // namespace mk

#endif
