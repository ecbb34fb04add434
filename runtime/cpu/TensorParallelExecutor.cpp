#include "runtime/cpu/TensorParallelExecutor.h"

#include "core/kernels/Sampling.h"
#include "runtime/cpu/BindWeights.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/Launch.h"
#include "runtime/cpu/LaunchChecks.h"

#include <algorithm>
#include <map>
#include <string>

namespace mk {

namespace {

// "" when `graph` is `first`'s model on another rank: the same tasks (but
// their weight bytes, which the sizes of the slices decide alike), events
// and buffers.
std::string sameShape(const TaskGraph &graph, const TaskGraph &first) {
  if (graph.tasks.size() != first.tasks.size() || graph.events.size() != first.events.size() ||
      graph.buffers.size() != first.buffers.size() ||
      graph.operations.size() != first.operations.size() || graph.maxContext != first.maxContext ||
      graph.rows != 1 || first.rows != 1)
    return "its tasks, events, buffers or operations are not rank 0's";
  for (size_t i = 0; i < graph.tasks.size(); ++i) {
    const Task &a = graph.tasks[i], &b = first.tasks[i];
    bool alike = a.kind == b.kind && a.op == b.op && a.begin == b.begin && a.end == b.end &&
                 a.trigger == b.trigger && a.waits.size() == b.waits.size() &&
                 a.weightBytes == b.weightBytes;
    for (size_t w = 0; alike && w < a.waits.size(); ++w)
      alike = a.waits[w].event == b.waits[w].event &&
              a.waits[w].stepOffset == b.waits[w].stepOffset &&
              a.waits[w].allRanks == b.waits[w].allRanks;
    if (!alike)
      return "task " + std::to_string(i) + " is not rank 0's";
  }
  for (size_t i = 0; i < graph.buffers.size(); ++i)
    if (graph.buffers[i].elements != first.buffers[i].elements ||
        graph.buffers[i].kind != first.buffers[i].kind)
      return "buffer " + std::to_string(i) + " is not rank 0's";
  for (size_t i = 0; i < graph.events.size(); ++i)
    if (graph.events[i].triggerCount != first.events[i].triggerCount)
      return "event " + std::to_string(i) + " is not rank 0's";
  return "";
}

} // namespace

struct TensorParallelExecutor::State {
  CpuExecutorOptions options;
  std::vector<ScheduledGraph> ranks;
  std::vector<std::vector<cpu::BoundOperation>> weights;
  std::vector<std::unique_ptr<cpu::ExecutorMemory>> memories;
  std::map<std::string, std::vector<float>> widenedVectors;
  std::vector<std::vector<int64_t>> contextTokens; // one sequence's
  int64_t nextPosition = 0, stepsRun = 0;
  uint64_t vocabulary = UINT64_MAX;
  std::string failure;
  cpu::LaunchRecord lastLaunch;

  std::vector<int64_t> launch(const std::vector<int64_t> &forced, int64_t steps,
                              const GenerateOptions &generate, int64_t eosFromStep);
};

TensorParallelExecutor::TensorParallelExecutor(const std::vector<ScheduledGraph> &ranks,
                                               const WeightTable &weights,
                                               CpuExecutorOptions options)
    : state(std::make_unique<State>()) {
  if (ranks.size() < 2)
    throw ExecutionError("tensor parallel needs two ranks or more, got " +
                         std::to_string(ranks.size()));
  state->options = options;
  state->ranks = ranks;
  uint64_t bytes = 0;
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const TaskGraph &graph = ranks[rank].graph;
    std::string name = "rank " + std::to_string(rank) + ": ";
    if (graph.ranks != static_cast<int64_t>(ranks.size()) || graph.rank != static_cast<int64_t>(rank))
      throw ExecutionError(name + "the graph says it is rank " + std::to_string(graph.rank) +
                           " of " + std::to_string(graph.ranks));
    std::string problem = cpu::validateProgram(graph, ranks[rank].schedule, options);
    if (problem.empty())
      problem = sameShape(graph, ranks[0].graph);
    if (problem.empty() && ranks[rank].schedule.queues != ranks[0].schedule.queues)
      problem = "its schedule is not rank 0's, which the cross-rank waits need";
    if (!problem.empty())
      throw ExecutionError(name + "invalid task graph: " + problem);
    bytes += cpu::ExecutorMemory::bytesNeeded(graph, options.checked);
  }
  uint64_t threads = uint64_t(ranks[0].schedule.numSms) * ranks.size();
  cpu::checkLimits(threads,
                   std::to_string(ranks.size()) + " ranks of " +
                       std::to_string(ranks[0].schedule.numSms) + " SMs need " +
                       std::to_string(threads) + " threads",
                   bytes, "the ranks' buffers", options);
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const TaskGraph &graph = state->ranks[rank].graph;
    state->weights.push_back(cpu::bindWeights(graph, weights, state->widenedVectors));
    state->memories.push_back(std::make_unique<cpu::ExecutorMemory>(graph, options.checked));
  }
  const TaskGraph &first = state->ranks[0].graph;
  state->contextTokens.assign(1, std::vector<int64_t>(first.maxContext + 1, -1));
  for (const Operation &op : first.operations)
    if (op.kind == OpKind::Embed)
      state->vocabulary = std::min(state->vocabulary, op.weights[0].rows);
}

TensorParallelExecutor::~TensorParallelExecutor() = default;

std::vector<int64_t> TensorParallelExecutor::State::launch(const std::vector<int64_t> &forced,
                                                          int64_t steps,
                                                          const GenerateOptions &generate,
                                                          int64_t eosFromStep) {
  cpu::checkNotFailed(failure);
  cpu::checkTokensInVocabulary(forced, vocabulary);
  cpu::checkContextRoom(steps, "more steps", nextPosition, ranks[0].graph.maxContext);
  std::copy(forced.begin(), forced.end(), contextTokens[0].begin() + nextPosition);
  cpu::LaunchPlan plan;
  plan.steps = steps;
  plan.firstStamp = stepsRun;
  plan.rows.push_back({0, nextPosition, 1, forced, steps, eosFromStep});
  plan.choice.settings = generate.sampling;
  plan.choice.contextTokens = &contextTokens;
  plan.eosTokens = generate.eosTokens;
  if (generate.onToken)
    plan.onToken = [&, eosFromStep](int64_t step, int64_t, int64_t token) {
      return step >= eosFromStep && generate.onToken(step - eosFromStep, token);
    };
  std::vector<cpu::RankProgram> programs;
  for (size_t rank = 0; rank < ranks.size(); ++rank)
    programs.push_back({&ranks[rank].graph, &ranks[rank].schedule, &weights[rank],
                        memories[rank].get()});
  std::string problem = cpu::runLaunch(programs, plan, options, lastLaunch);
  stepsRun += steps;
  if (!problem.empty()) {
    failure = problem;
    throw ExecutionError(problem);
  }
  nextPosition += lastLaunch.stepsDone;
  return lastLaunch.argmaxTokens;
}

std::vector<float> TensorParallelExecutor::step(int64_t token) {
  state->launch({token}, 1, GenerateOptions{}, INT64_MAX);
  std::span<const float> logits = state->memories[0]->values(state->ranks[0].graph.logitsBuffer);
  return std::vector<float>(logits.begin(), logits.end());
}

std::vector<int64_t> TensorParallelExecutor::generate(const std::vector<int64_t> &prompt,
                                                      int64_t newTokens,
                                                      const GenerateOptions &options) {
  std::string invalid = kernels::checkSamplingSettings(options.sampling);
  if (!invalid.empty())
    throw ExecutionError(invalid);
  if (prompt.empty() || newTokens < 1)
    throw ExecutionError("generate needs a prompt and at least 1 new token");
  int64_t fed = static_cast<int64_t>(prompt.size());
  std::vector<int64_t> tokens = state->launch(prompt, fed + newTokens - 1, options, fed - 1);
  int64_t produced = std::clamp<int64_t>(state->lastLaunch.stepsDone - (fed - 1), 0, newTokens);
  return std::vector<int64_t>(tokens.begin() + fed - 1, tokens.begin() + fed - 1 + produced);
}

int64_t TensorParallelExecutor::position() const { return state->nextPosition; }

GenerateStop TensorParallelExecutor::lastStop() const {
  if (state->lastLaunch.rowStops.empty())
    return {};
  return {state->lastLaunch.rowStops[0].atEos, state->lastLaunch.rowStops[0].byHost};
}

std::span<const double> TensorParallelExecutor::stepMilliseconds() const {
  return state->lastLaunch.stepMilliseconds;
}

} // namespace mk
