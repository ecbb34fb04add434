// Builds the schedule blob (ScheduleBlob.h) of a task graph: the records the
// persistent kernel reads, with every buffer placed in one of the regions
// the loader allocates.
//
// The layout, which docs/mk-format.md states for readers of the blob:
//  - activation arena (f32): the Activation, Scratch and Token buffers in
//    buffer order, each starting on a multiple of 64 elements (256 bytes);
//    the Token buffer takes two elements, which hold the int64 token;
//  - KV arena (f32): the KVCache buffers in buffer order, same alignment; a
//    bf16 cache (Buffer::element) packs two of its elements into each f32
//    element, little end first, and its offset counts f32 elements;
//  - params (f32): per operation, in order, its norm, its stacked biases,
//    its q and k norms, its inverse frequencies, each starting on a multiple
//    of 4 elements; a norm named by several operations is stored once;
//  - weights: offsets of the weight index (WeightEntry), in bf16 elements.
//
// The same graph, index and parameters give the same bytes, which is how the
// loader checks a blob: it builds it again and compares.
#ifndef MKC_RUNTIME_FORMAT_SCHEDULEBLOBBUILDER_H
#define MKC_RUNTIME_FORMAT_SCHEDULEBLOBBUILDER_H

#include "core/taskgraph/TaskGraph.h"
#include "runtime/format/Artifact.h"
#include "runtime/format/ScheduleBlob.h"

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk {

class ScheduleBlobError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

constexpr uint64_t kArenaAlignment = 64; // f32 elements
constexpr uint64_t kParamsAlignment = 4; // f32 elements

// `graph` must be valid (validateSchedule). `smallParams` gives the f32
// values of a norm weight or bias by name: the bf16-rounded ones, so that
// every engine of a .mk computes with the same numbers. Throws
// ScheduleBlobError when a weight is missing from `weights` or has another
// shape, a Gemv stacks more than MK_MAX_GEMV_WEIGHTS weights, a tile does
// not fit the records' 32-bit fields, or the graph's step is not one row of
// one sequence.
std::vector<uint8_t> buildScheduleBlob(
    const TaskGraph &graph, const Schedule &schedule, const std::vector<WeightEntry> &weights,
    const std::function<std::vector<float>(const std::string &weightName)> &smallParams);

// The same with the small parameters read from `data`, the bf16 section
// `weights` indexes, as a .mk holds them.
std::vector<uint8_t> buildScheduleBlob(const TaskGraph &graph, const Schedule &schedule,
                                       const std::vector<WeightEntry> &weights,
                                       std::span<const uint16_t> data);

// Where each buffer of `graph` lives on the device: the element offset of
// every buffer in its arena (the KV arena for KVCache buffers, the
// activation arena for the others), and the arenas' sizes.
struct ArenaLayout {
  std::vector<uint64_t> offset; // by buffer
  uint64_t activationElements = 0, kvElements = 0;
};
ArenaLayout layOutArenas(const TaskGraph &graph);

// The header of a blob at least sizeof(MkBlobHeader) bytes long.
MkBlobHeader readBlobHeader(std::span<const uint8_t> blob);

} // namespace mk

#endif
