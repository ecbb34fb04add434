// The parts of the validator, one file each; Validator.cpp runs them in an
// order where each may rely on what the previous ones established.
#ifndef MKC_CORE_VALIDATOR_VALIDATORCHECKS_H
#define MKC_CORE_VALIDATOR_VALIDATORCHECKS_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace mk::validation {

template <typename... Parts>
std::string cat(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Sizes in a hostile graph may be anything; every product or sum that could
// reach past 2^64 goes through these. They return false on overflow.
inline bool multiply(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool add(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}

// Graph-wide facts and indices: maxContext, buffers, events, the token and
// logits buffers, every operation (checkOperation), every task's indices,
// waits, declared ranges and tile (checkTile), trigger counts, one Argmax.
std::string checkGraph(const TaskGraph &graph);

// An operation's fields against each other, its buffers and its weight shapes.
std::string checkOperation(const TaskGraph &graph, uint32_t op);

// A task's tile against its operation; assumes the operation passed.
std::string checkTile(const TaskGraph &graph, uint32_t task);

// Every task in exactly one queue; queue entries in range.
std::string checkQueues(const TaskGraph &graph, const Schedule &schedule);

// Runs two consecutive steps of the queues in order per SM with event
// counters; any SM left waiting is a deadlock. Assumes checkGraph and
// checkQueues passed.
std::string checkDeadlockFree(const TaskGraph &graph, const Schedule &schedule);

// The task list is a topological order of the waits with step offset 0.
// Assumes the structure is valid.
std::string checkTaskOrder(const TaskGraph &graph);

class Ancestry;

// Declared against derived accesses, exactly one writer per element, reads
// covered by writers that happen before them. Assumes the structure is valid.
std::string checkDataflow(const TaskGraph &graph, const Ancestry &ancestry);

// Every task before the Argmax, every task of the next step after it.
std::string checkStepOrder(const TaskGraph &graph, const Ancestry &ancestry);

} // namespace mk::validation

#endif
