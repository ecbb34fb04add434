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
  options.rowSteps = compiled.rowSteps;
  options.ranks = compiled.ranks;
  options.weightSlices = compiled.weightSlices;
  std::string error;
  // Planned, then packed as the file is written: the weights are read (mapped
  // from the model's file, or generated) a piece at a time, never all held.
  auto planned = planArtifact(compiled.tasks, compiled.schedule, compiled.imported.weights,
                              std::move(options), error);
  if (!planned || !writeArtifact(path, planned->artifact, planned->weights, error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path + "': " + error);
  return llvm::Error::success();
}

} // namespace mk
