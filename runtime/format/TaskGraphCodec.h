// The TASKGRAPH section of a .mk file: the task graph and its schedule in a
// compact binary form, so that the loader can validate what the GPU will run
// and `mkc inspect` can show it without the model. docs/mk-format.md gives
// the encoding field by field.
//
// Decoding trusts nothing: every count is checked against the bytes left,
// every enumerator against its range, and trailing bytes are refused. It
// checks the encoding only; whether the graph makes sense is the validator's
// job (core/validator/Validator.h).
#ifndef MKC_RUNTIME_FORMAT_TASKGRAPHCODEC_H
#define MKC_RUNTIME_FORMAT_TASKGRAPHCODEC_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/SlicedValues.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mk {

constexpr uint32_t kTaskGraphMagic = 0x47544b4du; // "MKTG"
constexpr uint32_t kTaskGraphVersion = 8; // 2: no roped q buffer, no AttentionPrepare; 3: rows, sequences; 4: ranks, AllReduce; 5: chunksPerRound; 6: a buffer's element type, the logits' picks, task ordinals, inline tasks; 7: Mlp operations, seeds, additions, fixed64 buffers; 8: attention windows

std::vector<uint8_t> encodeTaskGraph(const TaskGraph &graph, const Schedule &schedule);

// "" on success, else what is wrong and at which byte.
std::string decodeTaskGraph(std::span<const uint8_t> bytes, TaskGraph &graph, Schedule &schedule);

// The ROWSTEPS section: a u32 count, then per step a u64 byte length and
// that many bytes of encodeTaskGraph. An empty section holds no steps.
std::vector<uint8_t> encodeRowSteps(const std::vector<ScheduledGraph> &steps);
std::string decodeRowSteps(std::span<const uint8_t> bytes, std::vector<ScheduledGraph> &steps);

// The RANKS section: a u64 byte length and that many bytes holding the
// ranks' graphs as ROWSTEPS holds steps, then a u32 count of weight slices,
// each a string name, a string source (u32 length, bytes), u64 rowBegin,
// rowEnd, colBegin, colEnd and a u8 zero (0 or 1). Empty: no ranks.
std::vector<uint8_t> encodeRanks(const std::vector<ScheduledGraph> &ranks,
                                 const std::vector<WeightSlice> &slices);
std::string decodeRanks(std::span<const uint8_t> bytes, std::vector<ScheduledGraph> &ranks,
                        std::vector<WeightSlice> &slices);

} // namespace mk

#endif
