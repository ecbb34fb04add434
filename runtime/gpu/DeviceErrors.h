// The kernel's error word (ControlBlock.h's MkDeviceError) as a message for
// the host, naming the task, event and step it carries.
#ifndef MKC_RUNTIME_GPU_DEVICEERRORS_H
#define MKC_RUNTIME_GPU_DEVICEERRORS_H

#include "core/taskgraph/TaskGraph.h"
#include "runtime/format/ControlBlock.h"

#include <string>

namespace mk {

// "" when control.error is MK_ERROR_NONE.
std::string describeDeviceError(const MkControlBlock &control, const TaskGraph &graph);

} // namespace mk

#endif
