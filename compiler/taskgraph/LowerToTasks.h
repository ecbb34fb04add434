// Lowering of the fused mk IR to a task graph: one Operation per fused op,
// a buffer for every value that crosses tasks, KV caches and attention
// scratch per layer, then SM-sized tasks joined by one event per operation.
// Expects @decode_step to hold only mk.embedding, mk.gemv,
// mk.fused_attention, mk.argmax and func.return (the fusion pipeline's
// output); anything else is an error naming the op. `shape` says how many
// rows a step holds and how many sequences the KV caches hold
// (core/taskgraph/StepRows.h): every buffer is laid out for them.
#ifndef MKC_COMPILER_TASKGRAPH_LOWERTOTASKS_H
#define MKC_COMPILER_TASKGRAPH_LOWERTOTASKS_H

#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskGraph.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mk {

llvm::Expected<TaskGraph> lowerToTasks(mlir::ModuleOp fused, const TargetDescription &target,
                                       int64_t maxContext, StepShape shape = {});

} // namespace mk

#endif
