// What a .mk file holds, as `mkc inspect MODEL.mk` prints it before the task
// graph's summary (in the manner of gguf-dump): the model's dimensions, the
// target and the kernel, the EOS tokens, the compiler and format versions,
// every section's place in the file, and the weights, largest first. Read
// through runtime/format's public reader (MkFile.h, ArtifactFile.h) only.
#ifndef MKC_COMPILER_INSPECT_ARTIFACTSUMMARY_H
#define MKC_COMPILER_INSPECT_ARTIFACTSUMMARY_H

#include "runtime/format/ArtifactFile.h"

#include <ostream>

namespace mk {

// How many of the largest weights are listed.
constexpr size_t kLargestWeightsShown = 5;

void printArtifactSummary(std::ostream &os, const LoadedArtifact &loaded);

// The same facts as one JSON object, on one level of indentation (two
// spaces), for the "artifact" member of `mkc inspect --format=json`.
void printArtifactJson(std::ostream &os, const LoadedArtifact &loaded);

} // namespace mk

#endif
