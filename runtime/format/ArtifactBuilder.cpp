#include "runtime/format/ArtifactBuilder.h"

#include "core/taskgraph/StepRows.h"
#include "core/validator/Validator.h"
#include "runtime/format/Bf16.h"
#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/format/RankKernel.h"
#include "runtime/format/RowKernels.h"
#include "runtime/format/Sha256.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace mk {

ModelFacts describeModel(const TaskGraph &graph, const Schedule &schedule) {
  ModelFacts facts;
  for (const Operation &op : graph.operations) {
    facts.numLayers = std::max<int64_t>(facts.numLayers, op.layer + 1);
    if (op.kind == OpKind::Embed && !op.weights.empty())
      facts.hidden = static_cast<int64_t>(op.weights[0].cols);
    if (op.kind == OpKind::Attention && facts.numHeads == 0) {
      facts.numHeads = op.numHeads;
      facts.numKvHeads = op.numKvHeads;
      facts.headDim = op.headDim;
    }
  }
  if (graph.logitsBuffer < graph.buffers.size())
    facts.vocab = static_cast<int64_t>(graph.buffers[graph.logitsBuffer].elements);
  facts.maxContext = graph.maxContext;
  facts.numSms = schedule.numSms;
  return facts;
}

std::string kernelFingerprint(const std::vector<uint8_t> &cubin, const std::string &ptx) {
  if (!cubin.empty())
    return sha256Hex(cubin);
  if (!ptx.empty())
    return sha256Hex(std::span(reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size()));
  return "";
}

namespace {

// Everything but the weights' bytes, from a plan of them.
bool describeArtifact(const TaskGraph &graph, const Schedule &schedule, const WeightTable &table,
                      const WeightPlan &plan, ArtifactOptions options, Artifact &artifact,
                      std::string &error) {
  artifact.weights = plan.index;
  // Norms and biases: vectors, small even for a big model.
  auto smallParams = [&](const std::string &name) {
    std::vector<float> values = table.find(name)->allValues();
    for (float &value : values)
      value = roundToBf16(value);
    return values;
  };
  try {
    artifact.scheduleBlob = buildScheduleBlob(graph, schedule, artifact.weights, smallParams);
  } catch (const ScheduleBlobError &blobError) {
    error = std::string("the schedule blob cannot hold this graph: ") + blobError.what();
    return false;
  } catch (const std::runtime_error &readError) {
    error = readError.what();
    return false;
  }
  artifact.graph = graph;
  artifact.schedule = schedule;
  artifact.facts = describeModel(graph, schedule);
  artifact.facts.eosTokens = std::move(options.eosTokens);
  artifact.facts.targetArch = std::move(options.targetArch);
  artifact.facts.compilerVersion = std::move(options.compilerVersion);
  artifact.facts.kernelFingerprint = kernelFingerprint(options.cubin, options.ptx);
  artifact.facts.kernelOptions = std::move(options.kernelOptions);
  artifact.cubin = std::move(options.cubin);
  artifact.ptx = std::move(options.ptx);
  artifact.facts.generation = std::move(options.generation);
  artifact.tokenizerJson = std::move(options.tokenizerJson);
  error = checkRowSteps(graph, options.rowSteps, artifact.weights);
  if (error.empty())
    error = checkRanks(graph, options.ranks, options.weightSlices, artifact.weights);
  if (!error.empty())
    return false;
  error = checkRowKernels(options.rowSteps, options.rowKernels);
  if (error.empty())
    error = checkRankKernel(options.ranks, options.rankKernel);
  if (!error.empty())
    return false;
  artifact.rowSteps = std::move(options.rowSteps);
  artifact.rowKernels = std::move(options.rowKernels);
  artifact.ranks = std::move(options.ranks);
  artifact.weightSlices = std::move(options.weightSlices);
  artifact.rankKernel = std::move(options.rankKernel);
  return true;
}

// Every weight the graph names is in `shapes` (name -> rows, cols), with its shape.
std::string checkStepWeights(const TaskGraph &graph,
                             const std::map<std::string, std::pair<uint64_t, uint64_t>> &shapes) {
  for (const WeightRef *ref : referencedWeights(graph)) {
    auto found = shapes.find(ref->name);
    if (found == shapes.end())
      return "weight '" + ref->name + "' is not in the weight index";
    if (found->second.first != ref->rows || found->second.second != ref->cols)
      return "weight '" + ref->name + "' is taken as [" + std::to_string(ref->rows) + ", " +
             std::to_string(ref->cols) + "], the index holds [" +
             std::to_string(found->second.first) + ", " + std::to_string(found->second.second) +
             "]";
  }
  return "";
}

std::map<std::string, std::pair<uint64_t, uint64_t>> shapesOf(const std::vector<WeightEntry> &weights) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> shapes;
  for (const WeightEntry &entry : weights)
    shapes.emplace(entry.name, std::pair(entry.rows, entry.cols));
  return shapes;
}

} // namespace

std::unique_ptr<PlannedArtifact> planArtifact(const TaskGraph &graph, const Schedule &schedule,
                                              const WeightTable &table, ArtifactOptions options,
                                              std::string &error) {
  auto planned = std::make_unique<PlannedArtifact>();
  if (!planWeights(graph, table, planned->weights, error) ||
      !describeArtifact(graph, schedule, table, planned->weights, std::move(options),
                        planned->artifact, error))
    return nullptr;
  return planned;
}

std::unique_ptr<BuiltArtifact> buildArtifact(const TaskGraph &graph, const Schedule &schedule,
                                             const WeightTable &weights, ArtifactOptions options,
                                             std::string &error) {
  auto built = std::make_unique<BuiltArtifact>();
  if (!packWeights(graph, weights, built->weights, error))
    return nullptr;
  WeightPlan plan;
  plan.index = built->weights.index;
  if (!describeArtifact(graph, schedule, weights, plan, std::move(options), built->artifact,
                        error))
    return nullptr;
  built->artifact.weightData = built->weights.data;
  return built;
}

std::string checkRowSteps(const TaskGraph &graph, const std::vector<ScheduledGraph> &rowSteps,
                          const std::vector<WeightEntry> &weights) {
  if (rowSteps.size() > kMaxRowSteps)
    return std::to_string(rowSteps.size()) + " steps of several rows, more than the " +
           std::to_string(kMaxRowSteps) + " a file may hold";
  bool prefill = false;
  std::vector<int64_t> batches;
  for (size_t index = 0; index < rowSteps.size(); ++index) {
    const TaskGraph &step = rowSteps[index].graph;
    std::string name = "step " + std::to_string(index) + " (" + std::to_string(step.rows) +
                       " rows over " + std::to_string(step.sequences) + " sequences)";
    if (std::string problem = validateSchedule(step, rowSteps[index].schedule); !problem.empty())
      return name + " does not validate: " + problem;
    if (step.rows < 2)
      return name + " holds one row: decode is the TASKGRAPH section's";
    if (step.sequences == 1) {
      if (prefill)
        return name + " is a second prefill chunk";
      if (!sharesKvCaches(step, graph))
        return name + " is a prefill chunk whose KV caches are not the task graph's";
      prefill = true;
    } else if (step.sequences == step.rows) {
      if (std::find(batches.begin(), batches.end(), step.rows) != batches.end())
        return name + " is a second batch of " + std::to_string(step.rows);
      if (step.maxContext != graph.maxContext)
        return name + " has maxContext " + std::to_string(step.maxContext) +
               ", the task graph " + std::to_string(graph.maxContext);
      batches.push_back(step.rows);
    } else {
      return name + " is neither a prefill chunk (one sequence) nor a batch (a row per sequence)";
    }
    if (std::string problem = checkStepWeights(step, shapesOf(weights)); !problem.empty())
      return name + ": " + problem;
  }
  return "";
}

std::string checkRanks(const TaskGraph &graph, const std::vector<ScheduledGraph> &ranks,
                       const std::vector<WeightSlice> &slices,
                       const std::vector<WeightEntry> &weights) {
  if (ranks.empty())
    return slices.empty() ? "" : "weight slices without ranks";
  if (ranks.size() < 2 || ranks.size() > 64)
    return std::to_string(ranks.size()) + " ranks, expected 2 to 64";
  std::map<std::string, std::pair<uint64_t, uint64_t>> shapes = shapesOf(weights);
  for (const WeightSlice &slice : slices) {
    auto source = shapes.find(slice.source);
    if (source == shapes.end())
      return "slice '" + slice.name + "' is of weight '" + slice.source +
             "', which is not in the weight index";
    if (std::string problem = checkWeightSlice(slice, source->second.first, source->second.second);
        !problem.empty())
      return problem;
    if (!shapes.emplace(slice.name, std::pair(slice.rowEnd - slice.rowBegin,
                                              slice.colEnd - slice.colBegin))
             .second)
      return "slice '" + slice.name + "' has the name of another weight";
  }
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const TaskGraph &step = ranks[rank].graph;
    std::string name = "rank " + std::to_string(rank);
    if (step.ranks != static_cast<int64_t>(ranks.size()) || step.rank != static_cast<int64_t>(rank))
      return name + " says it is rank " + std::to_string(step.rank) + " of " +
             std::to_string(step.ranks);
    if (step.maxContext != graph.maxContext || step.rows != 1 || step.sequences != 1)
      return name + " is not a decode step of the task graph's context";
    if (ranks[rank].schedule.queues != ranks[0].schedule.queues)
      return name + "'s schedule is not rank 0's, which its cross-rank waits need";
    if (std::string problem = validateSchedule(step, ranks[rank].schedule); !problem.empty())
      return name + " does not validate: " + problem;
    if (std::string problem = checkStepWeights(step, shapes); !problem.empty())
      return name + ": " + problem;
  }
  return "";
}

std::string checkSpecialTokens(const std::vector<int64_t> &eosTokens,
                               const std::optional<int64_t> &bosToken, int64_t vocab) {
  for (int64_t token : eosTokens)
    if (token < 0 || token >= vocab)
      return "EOS token " + std::to_string(token) + " is outside the vocabulary of " +
             std::to_string(vocab);
  if (bosToken && (*bosToken < 0 || *bosToken >= vocab))
    return "BOS token " + std::to_string(*bosToken) + " is outside the vocabulary of " +
           std::to_string(vocab);
  return "";
}

} // namespace mk
