// Assembles the Artifact of a compiled model from plain data (task graph,
// schedule, weight table, kernel): packs the weights, builds the schedule
// blob, states the model's facts. The compiler's writer
// (compiler/driver/WriteArtifact.h) and tests that make artifacts of
// hand-built graphs both use it.
#ifndef MKC_RUNTIME_FORMAT_ARTIFACTBUILDER_H
#define MKC_RUNTIME_FORMAT_ARTIFACTBUILDER_H

#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"
#include "runtime/format/Artifact.h"
#include "runtime/format/WeightPacking.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct ArtifactOptions {
  std::vector<int64_t> eosTokens;
  std::string targetArch = "sm_90a";
  std::string compilerVersion;
  std::vector<uint8_t> cubin; // both empty: the artifact has no kernel
  std::string ptx;
  std::string kernelOptions; // ModelFacts::kernelOptions; "" without a kernel
  GenerationFacts generation;
  std::string tokenizerJson;  // the TOKENIZER section; empty: none
  std::vector<ScheduledGraph> rowSteps; // the ROWSTEPS section (Artifact.h)
  std::vector<std::vector<uint8_t>> rowKernels; // the ROWKERNELS section: none, or one per step
  std::vector<ScheduledGraph> ranks;    // the RANKS section
  std::vector<WeightSlice> weightSlices;
  RankKernel rankKernel; // the RANKKERNEL section: empty, or the ranks' kernel
};

// An Artifact whose weightData views the packed weights it owns.
struct BuiltArtifact {
  Artifact artifact;
  PackedWeights weights;
};

// The facts the task graph states: layers, widths, heads, vocabulary, context.
ModelFacts describeModel(const TaskGraph &graph, const Schedule &schedule);

// "" when every EOS token and the BOS token are ids of a vocabulary of
// `vocab`, else which is not: the compiler refuses such options before any
// work, and the loader such a file.
std::string checkSpecialTokens(const std::vector<int64_t> &eosTokens,
                               const std::optional<int64_t> &bosToken, int64_t vocab);

// "" when the steps of several rows can run beside `graph` (the decode
// graph) on the weights of `weights`, else why not, naming the step: each
// validates; holds more than one row; is a prefill chunk (one sequence, the
// decode graph's KV caches; at most one) or a batch (a row per sequence, of
// a size no other batch has); and names only weights of the index, with
// their shapes. At most kMaxRowSteps of them.
constexpr size_t kMaxRowSteps = 16;
std::string checkRowSteps(const TaskGraph &graph, const std::vector<ScheduledGraph> &rowSteps,
                          const std::vector<WeightEntry> &weights);


// "" when the ranks can run `graph`'s model on the weights of `weights`,
// else why not, naming the rank or slice: one graph per rank, rank r being
// rank r of them all, each validating on the one schedule, of graph's
// context; every slice a block of a weight of the index; every weight a
// rank names a weight of the index or a slice, with its shape.
std::string checkRanks(const TaskGraph &graph, const std::vector<ScheduledGraph> &ranks,
                       const std::vector<WeightSlice> &slices,
                       const std::vector<WeightEntry> &weights);

// An Artifact whose weights are planned, not packed: weightData is empty and
// writeArtifact(path, artifact, weights, ...) packs them as it writes them,
// so that no copy of a big model's weights is ever held. `table` must
// outlive it (the plan points into it).
struct PlannedArtifact {
  Artifact artifact;
  WeightPlan weights;
};

// nullptr with `error` set when a weight is missing or the blob cannot hold
// the graph. A weight whose values round to NaN or infinity is found when it
// is written.
std::unique_ptr<PlannedArtifact> planArtifact(const TaskGraph &graph, const Schedule &schedule,
                                              const WeightTable &table, ArtifactOptions options,
                                              std::string &error);

// nullptr with `error` set when a weight is missing or the blob cannot hold
// the graph.
std::unique_ptr<BuiltArtifact> buildArtifact(const TaskGraph &graph, const Schedule &schedule,
                                             const WeightTable &weights, ArtifactOptions options,
                                             std::string &error);

// SHA-256 of the CUBIN, or of the PTX when there is no CUBIN; "" without either.
std::string kernelFingerprint(const std::vector<uint8_t> &cubin, const std::string &ptx);

} // namespace mk

#endif
