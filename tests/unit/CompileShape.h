// A decoder shape compiled through the driver's own path (compileToSchedule
// reads a file): its unfused mk IR (FusedModuleText.h) written to a
// temporary file, compiled, the file removed.
#ifndef MKC_TESTS_UNIT_COMPILESHAPE_H
#define MKC_TESTS_UNIT_COMPILESHAPE_H

#include "FusedModuleText.h"

#include "compiler/driver/Pipeline.h"

#include "llvm/Support/Error.h"

namespace mk::test {

llvm::Expected<CompiledModel> compileShape(mlir::MLIRContext &context, const ModelShape &shape,
                                           const CompileOptions &options);

} // namespace mk::test

#endif
