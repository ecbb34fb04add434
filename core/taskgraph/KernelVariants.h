// The kernel variants a task graph needs: one instantiation of a kind's
// device function for each distinct (kind, variant arguments) among its
// tasks (TaskKind.h), numbered by kind, then arguments. The code generator
// emits one dispatch case per variant and publishes the list in the kernel;
// the schedule blob gives every task its variant's number; the loader
// compares the kernel's list with the graph's before it launches, so a
// graph the kernel was not generated for is refused at load, not mid-run.
#ifndef MKC_CORE_TASKGRAPH_KERNELVARIANTS_H
#define MKC_CORE_TASKGRAPH_KERNELVARIANTS_H

#include "core/taskgraph/TaskGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

struct KernelVariant {
  TaskKind kind = TaskKind::Embed;
  std::vector<int64_t> arguments;      // the kind's variant parameters, in order
  std::vector<std::string> operations; // the operations whose tasks use it
};

struct KernelVariants {
  std::vector<KernelVariant> variants;
  std::vector<uint32_t> ofTask; // by task id
};

// Assumes every task's kind and operation are valid.
KernelVariants listKernelVariants(const TaskGraph &graph);

// "Gemv(input 576, epilogue 2, norm false, bias false)"
std::string describeVariant(TaskKind kind, const std::vector<int64_t> &arguments);

} // namespace mk

#endif
