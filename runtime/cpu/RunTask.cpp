#include "runtime/cpu/Tasks.h"

namespace mk::cpu {

namespace {

// Each kind's CPU reference, by opcode (core/protocol/TaskKindList.h).
#define MK_CPU_TASK(Name, NAME, opcode) run##Name##Task,
void (*const kTaskFunctions[])(TaskContext &) = {MK_TASK_KINDS(MK_CPU_TASK)};
#undef MK_CPU_TASK
static_assert(std::size(kTaskFunctions) == kNumTaskKinds, "a CPU reference per task kind");

} // namespace

void runTask(TaskContext &context) {
  kTaskFunctions[static_cast<size_t>(context.task.kind)](context);
  context.recheckReads();
}

} // namespace mk::cpu
