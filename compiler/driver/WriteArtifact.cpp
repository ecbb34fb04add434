#include "compiler/driver/WriteArtifact.h"

#include "runtime/format/ArtifactFile.h"

namespace mk {

const char *const kCompilerVersion = "mkc 0.1.0";

llvm::Error writeCompiledModel(const CompiledModel &compiled, ArtifactOptions options,
                               const std::string &path) {
  if (options.targetArch.empty())
    options.targetArch = "sm_90a";
  if (options.compilerVersion.empty())
    options.compilerVersion = kCompilerVersion;
  std::string error;
  auto built = buildArtifact(compiled.tasks, compiled.schedule, compiled.imported.weights,
                             std::move(options), error);
  if (!built || !writeArtifact(path, built->artifact, error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path + "': " + error);
  return llvm::Error::success();
}

} // namespace mk
