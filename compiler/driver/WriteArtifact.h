// The last rung of `mkc compile --emit=`: a compiled model as one .mk file
// (docs/mk-format.md) — its weights rounded to bf16, the manifest, the
// schedule blob, the task graph, and the megakernel when there is one.
#ifndef MKC_COMPILER_DRIVER_WRITEARTIFACT_H
#define MKC_COMPILER_DRIVER_WRITEARTIFACT_H

#include "compiler/driver/Pipeline.h"
#include "runtime/format/ArtifactBuilder.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mk {

// What every manifest records as its compiler.
extern const char *const kCompilerVersion;

// `options` carries the EOS tokens and the kernel (CUBIN and PTX, both empty
// for an artifact that only the CPU can run); the target architecture and
// the compiler version are filled in here when empty. Fails when the model
// has no weight values (mk IR read from a .mlir file) or the schedule blob
// cannot hold the graph.
llvm::Error writeCompiledModel(const CompiledModel &compiled, ArtifactOptions options,
                               const std::string &path);

} // namespace mk

#endif
