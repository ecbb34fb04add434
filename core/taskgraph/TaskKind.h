// One description per task kind: what its tile names, what one step of it
// reads, writes and streams, which event it triggers, and which device
// function runs it with which template arguments and how much shared memory.
// Every stage reads it and none writes its own copy: the lowering
// (compiler/taskgraph/TileOperations.cpp: footprints, weights, events), the
// validator (tiles, footprints), the cost model, the CPU executor, the code
// generator (dispatch, shared memory), inspect, traces and messages (names,
// tiles). What the device needs of a kind sits in core/protocol/, compiled by
// both g++ and NVRTC.
//
// Events. The task kinds of one operation run in phases, in the order of
// their opcodes: the first phase waits on the producers of what the
// operation reads; a kind with a `phaseEvent` triggers the operation's event
// of that name ("layer0.attn.prepare"), which the next phase waits on; the
// last phase triggers the operation's output event. A kind the operation
// has no tiles of is no phase: a Gemv's tiles are all Gemv's or, for one
// projecting by head (projectsByHead), all HeadProjection's.
// ChunkDependencies then narrows each wait to the producer tiles a task
// really reads.
//
// Adding a kind: its line in core/protocol/TaskKindList.h; its description
// (kinds/<Kind>Kind.cpp, listed in TaskKinds.cpp); its CPU reference
// (runtime/cpu/<Kind>Task.cpp, listed in runtime/cpu/RunTask.cpp); its
// device function (codegen/device/<Kind>Task.cuh); its check of the two
// against each other (tests/gpu/TaskKindCheck.cpp).
#ifndef MKC_CORE_TASKGRAPH_TASKKIND_H
#define MKC_CORE_TASKGRAPH_TASKKIND_H

#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// A template argument of a kind's device function that selects its
// instantiation (its kernel variant), and how a value of it is written in
// C++ (nullptr: a decimal number).
struct VariantParameter {
  const char *name;
  std::string (*spell)(int64_t value) = nullptr;
};

// Spellings for VariantParameter::spell.
std::string spellBoolean(int64_t value);  // true, false
std::string spellEpilogue(int64_t value); // MK_EPILOGUE_NONE, ...
std::string spellVariantArgument(const VariantParameter &parameter, int64_t value);

struct TaskKindDescription {
  TaskKind kind;
  const char *name;  // as messages, inspect and traces name the kind
  OpKind operation;  // the kind of operation it is a tile of
  const char *phaseEvent; // the event it triggers (see Events above); nullptr: the output's

  // The tile: "rows [0, 32)", "kv head 1, chunk 3"; and "" when it lies
  // inside its (validated) operation, else what falls outside.
  std::string (*describeTile)(const Task &task);
  std::string (*checkTile)(const Operation &op, const Task &task);

  // What one step reads and writes (KV slots relative to the step's
  // position: Task::reads). Assumes a validated operation and tile.
  TaskFootprint (*footprint)(const TaskGraph &graph, const Operation &op, const Task &task);
  // Weight elements streamed per step, and KV-cache elements read per step
  // at most (the cost model's bytes).
  uint64_t (*weightElements)(const Operation &op, const Task &task);
  uint64_t (*cacheElements)(const Operation &op, const Task &task);
  // For the scheduler, a kind whose tiles have work only from some position
  // of the step on: a rank that grows with that position (an attention
  // chunk's index: the chunks past the position are empty); nullptr when
  // every step gives a tile the same work.
  uint64_t (*positionRank)(const Task &task) = nullptr;

  // The device: the function template in codegen/device/ that runs the kind,
  // the parameters that pick its instantiation, their values for an
  // operation, the arguments every instantiation takes after them, and the
  // function of core/protocol/SharedMemory.h giving its shared floats from
  // the same values.
  const char *deviceFunction;
  std::vector<VariantParameter> variantParameters;
  std::vector<int64_t> (*variantArguments)(const TaskGraph &graph, const Operation &op);
  const char *kernelArguments;
  const char *sharedFloatsFunction;
  uint64_t (*sharedFloats)(const std::vector<int64_t> &variant);
};

// Whether `kind` is one of the kinds (a decoded graph may hold anything).
bool isTaskKind(TaskKind kind);
// The description of a known kind.
const TaskKindDescription &describeKind(TaskKind kind);

} // namespace mk

#endif
