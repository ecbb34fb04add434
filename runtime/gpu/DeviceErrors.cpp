#include "runtime/gpu/DeviceErrors.h"

#include "core/taskgraph/TaskNames.h"

namespace mk {

namespace {

std::string mismatchText(int64_t detail) {
  switch (detail) {
  case MK_MISMATCH_BLOB_MAGIC:
    return "the schedule blob's magic is wrong";
  case MK_MISMATCH_BLOB_VERSION:
    return "the schedule blob has another version than the kernel";
  case MK_MISMATCH_GRID:
    return "the grid is not one CTA per queue of the schedule";
  case MK_MISMATCH_BLOCK:
    return "the block is not the kernel's thread count";
  case MK_MISMATCH_STEPS:
    return "the steps run past the compiled maxContext";
  case MK_MISMATCH_NO_ARGMAX:
    return "the schedule has no argmax task";
  case MK_MISMATCH_BLOB_ALIGNMENT:
    return "a region of the schedule blob is not 8-byte aligned";
  case MK_MISMATCH_ROWS:
    return "the step's rows are not the kernel's, or a row's sequence or positions fall "
           "outside the caches";
  case MK_MISMATCH_RANKS:
    return "the schedule's ranks are not the kernel's, or the launch names no rank of them";
  default:
    return "mismatch " + std::to_string(detail);
  }
}

std::string taskText(const MkControlBlock &control, const TaskGraph &graph) {
  if (control.errorTask >= graph.tasks.size())
    return "no task";
  return describeTask(graph, control.errorTask);
}

} // namespace

std::string describeDeviceError(const MkControlBlock &control, const TaskGraph &graph) {
  std::string where = " at step " + std::to_string(control.errorStep) + " on SM " +
                      std::to_string(control.errorSm);
  switch (control.error) {
  case MK_ERROR_NONE:
    return "";
  case MK_ERROR_WAIT_TIMEOUT: {
    std::string waiter = control.errorTask < graph.tasks.size()
                             ? describeTask(graph, control.errorTask) + where
                             : "SM " + std::to_string(control.errorSm) + ", at the end of step " +
                                   std::to_string(control.errorStep) + ",";
    std::string event = control.errorEvent < graph.events.size()
                            ? describeEvent(graph, control.errorEvent)
                            : "event " + std::to_string(control.errorEvent);
    return "MK_ERROR_WAIT_TIMEOUT: " + waiter + " waited on " + event + " to reach " +
           std::to_string(control.errorDetail) + " for longer than the bound";
  }
  case MK_ERROR_RANK_WAIT_TIMEOUT: {
    uint64_t detail = static_cast<uint64_t>(control.errorDetail);
    std::string event = control.errorEvent < graph.events.size()
                            ? describeEvent(graph, control.errorEvent)
                            : "event " + std::to_string(control.errorEvent);
    return "MK_ERROR_RANK_WAIT_TIMEOUT: " + taskText(control, graph) + where + " waited on " +
           event + " of rank " + std::to_string(detail >> 32) + " to reach " +
           std::to_string(detail & 0xffffffffu) + " for longer than the bound";
  }
  case MK_ERROR_NON_FINITE_LOGIT:
    return "MK_ERROR_NON_FINITE_LOGIT: logit " + std::to_string(control.errorDetail) +
           " is NaN or infinite" + where;
  case MK_ERROR_TOKEN_OUT_OF_RANGE:
    return "MK_ERROR_TOKEN_OUT_OF_RANGE: " + taskText(control, graph) + where +
           " was given token " + std::to_string(control.errorDetail);
  case MK_ERROR_LAUNCH_MISMATCH:
    return "MK_ERROR_LAUNCH_MISMATCH: " + mismatchText(control.errorDetail);
  case MK_ERROR_UNKNOWN_VARIANT:
    return "MK_ERROR_UNKNOWN_VARIANT: " + taskText(control, graph) + where +
           " has a shape the kernel was not generated for";
  case MK_ERROR_EMPTY_ATTENTION:
    return "MK_ERROR_EMPTY_ATTENTION: " + taskText(control, graph) + where +
           " found no chunk holding a position for q head " + std::to_string(control.errorDetail);
  default:
    return "device error " + std::to_string(control.error) + where;
  }
}

} // namespace mk
