// Checks a task graph and its schedule before anything runs them. Written
// against the graph's own description of itself, not against the lowering
// or the scheduler that made it: the executors run only what passes here, so
// a corrupted or hostile graph must be refused with a message, never crash
// them, hang them, or let a task read data before it is ready.
//
// The dataflow checks use what each task really touches, derived from its
// kind, operation and tile (TaskFootprint.h); the reads and writes a task
// declares must agree with it.
#ifndef MKC_CORE_VALIDATOR_VALIDATOR_H
#define MKC_CORE_VALIDATOR_VALIDATOR_H

#include "core/taskgraph/TaskGraph.h"

#include <string>

namespace mk {

// Everything: the structure below, then the dataflow of one step and the
// order between consecutive steps —
//  - what each task declares it reads and writes matches what it does;
//  - each element of an Activation or Scratch buffer, and of the step's slot
//    of a KV cache, is written by exactly one task per step, and that task
//    happens before every task that reads the element (the reader waits,
//    through a chain of waits with step offset 0, on an event the writer
//    triggers);
//  - the task list is a topological order;
//  - every task is an ancestor of the Argmax task and, in the next step, a
//    descendant of it (through a wait with step offset -1), so consecutive
//    steps never overlap and counters of one step are never mistaken for
//    those of the next.
// Returns "" when valid, else what is wrong and which task it concerns.
std::string validateSchedule(const TaskGraph &graph, const Schedule &schedule);

// What an executor needs in order to run without crashing or hanging, and no
// more: indices in range, operations consistent with their buffers and
// weight shapes, every access in bounds, trigger counts equal to the tasks
// that trigger each event, one Argmax task, every task in exactly one queue,
// and queues that run two consecutive steps to the end under in-order
// execution per SM. Races are not looked for: tests use this to run graphs
// with a missing dependency and show that the checked executor catches them.
std::string validateStructure(const TaskGraph &graph, const Schedule &schedule);

} // namespace mk

#endif
