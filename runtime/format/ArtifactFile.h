// An Artifact to and from a .mk file. Loading checks the whole file before
// anything runs it: the container (MkFile.h), the manifest, the task graph's
// encoding and then the graph itself with the validator, the weight index
// against the weights section, the schedule blob against the graph (rebuilt
// and compared byte for byte, so the GPU never follows offsets the validator
// has not seen), and the kernel's fingerprint.
#ifndef MKC_RUNTIME_FORMAT_ARTIFACTFILE_H
#define MKC_RUNTIME_FORMAT_ARTIFACTFILE_H

#include "runtime/format/Artifact.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/WeightPacking.h"

#include <memory>
#include <string>

namespace mk {

bool writeArtifact(const std::string &path, const Artifact &artifact, std::string &error);
// The same file, its WEIGHTS section packed from `weights` as it is written
// (artifact.weightData is not read): a big model's weights are never held.
bool writeArtifact(const std::string &path, const Artifact &artifact, const WeightPlan &weights,
                   std::string &error);

// An Artifact whose weightData views the file's mapping.
struct LoadedArtifact {
  std::unique_ptr<MkFile> file;
  Artifact artifact;
};

// nullptr with `error` set when the file is unreadable or anything in it is
// inconsistent.
std::unique_ptr<LoadedArtifact> loadArtifact(const std::string &path, std::string &error);
// The same checks on a container already opened (MkFile::view for bytes in memory).
std::unique_ptr<LoadedArtifact> loadArtifact(std::unique_ptr<MkFile> file, std::string &error);

// Whether the artifact carries a megakernel (CUBIN or PTX).
inline bool hasKernel(const Artifact &artifact) {
  return !artifact.cubin.empty() || !artifact.ptx.empty();
}

} // namespace mk

#endif
