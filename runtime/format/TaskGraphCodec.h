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

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mk {

constexpr uint32_t kTaskGraphMagic = 0x47544b4du; // "MKTG"
constexpr uint32_t kTaskGraphVersion = 4; // 2: no roped q buffer, no AttentionPrepare; 3: rows, sequences; 4: ranks, AllReduce

std::vector<uint8_t> encodeTaskGraph(const TaskGraph &graph, const Schedule &schedule);

// "" on success, else what is wrong and at which byte.
std::string decodeTaskGraph(std::span<const uint8_t> bytes, TaskGraph &graph, Schedule &schedule);

// The ROWSTEPS section: a u32 count, then per step a u64 byte length and
// that many bytes of encodeTaskGraph. An empty section holds no steps.
std::vector<uint8_t> encodeRowSteps(const std::vector<ScheduledGraph> &steps);
std::string decodeRowSteps(std::span<const uint8_t> bytes, std::vector<ScheduledGraph> &steps);

} // namespace mk

#endif
