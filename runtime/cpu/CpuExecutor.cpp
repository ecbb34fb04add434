#include "runtime/cpu/CpuExecutor.h"

#include "core/kernels/Sampling.h"
#include "core/taskgraph/TaskNames.h"
#include "core/validator/Validator.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/Launch.h"
#include "runtime/cpu/TaskContext.h"
#include "runtime/cpu/Tasks.h"
#include "runtime/format/ControlBlock.h"

#include <algorithm>
#include <map>
#include <string>

namespace mk {

namespace {

const Weight &findWeight(const TaskGraph &graph, uint32_t op, const WeightTable &table,
                         const WeightRef &ref) {
  const Weight *weight = table.find(ref.name);
  if (!weight)
    throw ExecutionError(describeOperation(graph, op) + ": weight '" + ref.name +
                         "' is not in the weight table");
  uint64_t expected = 0;
  bool fits = !__builtin_mul_overflow(ref.rows, ref.cols, &expected);
  uint64_t held = weight->source ? static_cast<uint64_t>(weight->numElements())
                                 : weight->values.size();
  if (!fits || held != expected || static_cast<uint64_t>(weight->numElements()) != expected)
    throw ExecutionError(describeOperation(graph, op) + ": weight '" + ref.name + "' has " +
                         std::to_string(held) + " values, the graph expects [" +
                         std::to_string(ref.rows) + ", " + std::to_string(ref.cols) + "]");
  return *weight;
}

// Binds every operation's weights: matrices as they are held (f32 values, or
// a mapped .mk's bf16 bits), vectors as f32, widened into `widened` when
// they are held otherwise (they are small).
std::vector<cpu::BoundOperation> bindWeights(const TaskGraph &graph, const WeightTable &table,
                                             std::map<std::string, std::vector<float>> &widened) {
  std::vector<cpu::BoundOperation> bound(graph.operations.size());
  for (uint32_t op = 0; op < graph.operations.size(); ++op) {
    const Operation &operation = graph.operations[op];
    auto vector = [&](const WeightRef &ref) -> std::span<const float> {
      const Weight &weight = findWeight(graph, op, table, ref);
      if (!weight.source)
        return weight.values;
      auto [it, added] = widened.try_emplace(ref.name);
      if (added)
        it->second = weight.allValues();
      return it->second;
    };
    auto matrix = [&](const WeightRef &ref) -> cpu::BoundMatrix {
      const Weight &weight = findWeight(graph, op, table, ref);
      if (weight.source && !weight.source->bf16Bits().empty())
        return {{}, weight.source->bf16Bits()};
      return {vector(ref), {}};
    };
    for (const WeightRef &ref : operation.weights)
      bound[op].weights.push_back(matrix(ref));
    for (const WeightRef &ref : operation.biases)
      bound[op].biases.push_back(vector(ref));
    if (!operation.norm.name.empty())
      bound[op].norm = vector(operation.norm);
    if (!operation.qNorm.name.empty())
      bound[op].qNorm = vector(operation.qNorm);
    if (!operation.kNorm.name.empty())
      bound[op].kNorm = vector(operation.kNorm);
  }
  return bound;
}

} // namespace

struct CpuExecutor::State {
  TaskGraph graph;
  Schedule schedule;
  CpuExecutorOptions options;
  std::vector<cpu::BoundOperation> weights;
  // Vectors (norms, biases) widened from weights held as bf16 or lazily.
  std::map<std::string, std::vector<float>> widenedVectors;
  std::unique_ptr<cpu::ExecutorMemory> memory;
  uint64_t vocabulary = 0; // rows of the smallest embedding table
  int64_t nextPosition = 0;
  bool tokenWritten = false;
  std::string failure; // set once a launch failed
  cpu::LaunchRecord lastLaunch;
  // The token fed at each position, -1 where none was: what the repetition
  // penalty counts.
  std::vector<int64_t> contextTokens;

  void checkUsable() const {
    if (!failure.empty())
      throw ExecutionError("the executor stopped after an earlier error: " + failure);
  }
  std::vector<int64_t> launch(std::vector<int64_t> forcedTokens, int64_t steps,
                              const GenerateOptions *options = nullptr, int64_t eosFromStep = 0);
};

CpuExecutor::CpuExecutor(const TaskGraph &graph, const Schedule &schedule,
                         const WeightTable &weights, CpuExecutorOptions options)
    : state(std::make_unique<State>()) {
  std::string problem = options.validateDataflow ? validateSchedule(graph, schedule)
                                                 : validateStructure(graph, schedule);
  if (!problem.empty())
    throw ExecutionError("invalid task graph: " + problem);
  if (options.threaded && schedule.numSms > options.maxThreads)
    throw ExecutionError("the schedule has " + std::to_string(schedule.numSms) +
                         " SMs, more than the " + std::to_string(options.maxThreads) +
                         " threads allowed");
  uint64_t bytes = cpu::ExecutorMemory::bytesNeeded(graph, options.checked);
  if (bytes > options.maxMemoryBytes)
    throw ExecutionError("the graph's buffers need " + std::to_string(bytes) +
                         " bytes, more than the " + std::to_string(options.maxMemoryBytes) +
                         " allowed");
  state->weights = bindWeights(graph, weights, state->widenedVectors);
  state->graph = graph;
  state->schedule = schedule;
  state->options = options;
  state->memory = std::make_unique<cpu::ExecutorMemory>(state->graph, options.checked);
  state->contextTokens.assign(graph.maxContext + 1, -1);
  state->vocabulary = UINT64_MAX;
  for (const Operation &op : graph.operations)
    if (op.kind == OpKind::Embed)
      state->vocabulary = std::min(state->vocabulary, op.weights[0].rows);
}

CpuExecutor::~CpuExecutor() = default;

std::vector<int64_t> CpuExecutor::State::launch(std::vector<int64_t> forcedTokens, int64_t steps,
                                                const GenerateOptions *generate,
                                                int64_t eosFromStep) {
  for (int64_t token : forcedTokens)
    if (token < 0 || static_cast<uint64_t>(token) >= vocabulary)
      throw ExecutionError("token " + std::to_string(token) + " is outside the vocabulary of " +
                           std::to_string(vocabulary));
  if (steps > graph.maxContext - nextPosition)
    throw ExecutionError("the context is full: " + std::to_string(steps) + " more steps from position " +
                         std::to_string(nextPosition) + " pass maxContext " +
                         std::to_string(graph.maxContext));
  uint64_t traceBytes = uint64_t(steps) * graph.tasks.size() * MK_TRACE_TIMES * sizeof(uint64_t);
  if (options.trace && traceBytes > options.maxTraceBytes)
    throw ExecutionError("a trace of " + std::to_string(steps) + " steps of " +
                         std::to_string(graph.tasks.size()) + " tasks needs " +
                         std::to_string(traceBytes) + " bytes, more than the " +
                         std::to_string(options.maxTraceBytes) + " allowed: trace fewer steps");
  for (size_t i = 0; i < forcedTokens.size(); ++i)
    contextTokens[nextPosition + i] = forcedTokens[i];
  cpu::LaunchPlan plan{nextPosition, steps, std::move(forcedTokens)};
  plan.choice.contextTokens = &contextTokens;
  if (generate) {
    plan.choice.settings = generate->sampling;
    plan.eosTokens = generate->eosTokens;
    plan.eosFromStep = eosFromStep;
    if (generate->onToken)
      plan.onToken = [&, eosFromStep](int64_t step, int64_t token) {
        return step >= eosFromStep && generate->onToken(step - eosFromStep, token);
      };
  }
  std::string problem =
      cpu::runLaunch(graph, schedule, weights, *memory, plan, options, lastLaunch);
  if (!problem.empty()) {
    failure = problem;
    throw ExecutionError(problem);
  }
  nextPosition += lastLaunch.stepsDone;
  tokenWritten = true;
  return lastLaunch.argmaxTokens;
}

std::vector<float> CpuExecutor::step(int64_t token) {
  state->checkUsable();
  state->launch({token}, 1);
  std::span<const float> values = logits();
  return std::vector<float>(values.begin(), values.end());
}

std::vector<int64_t> CpuExecutor::generate(const std::vector<int64_t> &prompt, int64_t newTokens) {
  return generate(prompt, newTokens, GenerateOptions{});
}

GenerateStop CpuExecutor::lastStop() const {
  return {state->lastLaunch.stoppedAtEos, state->lastLaunch.stoppedByHost};
}

std::vector<int64_t> CpuExecutor::generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                                           const GenerateOptions &options) {
  state->checkUsable();
  std::string invalid = kernels::checkSamplingSettings(options.sampling);
  if (!invalid.empty())
    throw ExecutionError(invalid);
  if (newTokens < 0)
    throw ExecutionError("cannot generate " + std::to_string(newTokens) + " tokens");
  if (prompt.empty() && !state->tokenWritten)
    throw ExecutionError("nothing to continue from: the prompt is empty and no step has run");
  if (newTokens > state->graph.maxContext)
    throw ExecutionError("the context is full: " + std::to_string(newTokens) +
                         " new tokens pass maxContext " + std::to_string(state->graph.maxContext));
  int64_t fed = static_cast<int64_t>(prompt.size());
  // The last prompt step already yields the first new token; the last new
  // token is returned, not fed.
  int64_t steps = prompt.empty() ? newTokens : fed + std::max<int64_t>(newTokens, 1) - 1;
  if (steps == 0)
    return {};
  int64_t first = prompt.empty() ? 0 : fed - 1;
  std::vector<int64_t> tokens = state->launch(prompt, steps, &options, first);
  int64_t produced = std::clamp<int64_t>(state->lastLaunch.stepsDone - first, 0, newTokens);
  return std::vector<int64_t>(tokens.begin() + first, tokens.begin() + first + produced);
}

int64_t CpuExecutor::runOneTask(uint32_t task, int64_t position, int64_t token) {
  return runOneTask(task, position, token, mk_sampling_greedy(), {});
}

int64_t CpuExecutor::runOneTask(uint32_t task, int64_t position, int64_t token,
                                const MkSamplingSettings &sampling,
                                std::span<const int64_t> context) {
  state->checkUsable();
  const TaskGraph &graph = state->graph;
  if (task >= graph.tasks.size() || position < 0 || position >= graph.maxContext)
    throw ExecutionError(describeTask(graph, task) + " at position " + std::to_string(position) +
                         " is not a task of the graph within its context");
  std::vector<int64_t> argmaxTokens(1, 0);
  std::vector<int64_t> tokensByPosition(position + 2, -1);
  std::copy_n(context.begin(), std::min<size_t>(context.size(), position + 1),
              tokensByPosition.begin());
  cpu::TokenChoice choice{sampling, &tokensByPosition};
  cpu::StepInput input{0, position, token, &argmaxTokens, &choice};
  const Task &run = graph.tasks[task];
  try {
    cpu::TaskContext context(graph, run, state->weights[run.op], *state->memory, input);
    cpu::runTask(context);
  } catch (const std::exception &error) {
    throw ExecutionError(error.what());
  }
  return state->memory->token();
}

std::span<float> CpuExecutor::bufferValues(uint32_t buffer) {
  if (buffer >= state->graph.buffers.size())
    throw ExecutionError("buffer " + std::to_string(buffer) + " is not in the graph");
  return state->memory->values(buffer);
}

void CpuExecutor::startAt(int64_t position) {
  state->checkUsable();
  if (position < 0 || position > state->graph.maxContext)
    throw ExecutionError("start position " + std::to_string(position) + " is outside [0, " +
                         std::to_string(state->graph.maxContext) + "], the graph's context");
  state->nextPosition = position;
}

void CpuExecutor::setTrace(bool trace) { state->options.trace = trace; }

int64_t CpuExecutor::position() const { return state->nextPosition; }

std::span<const float> CpuExecutor::logits() const {
  return state->memory->values(state->graph.logitsBuffer);
}

std::span<const double> CpuExecutor::stepMilliseconds() const {
  return state->lastLaunch.stepMilliseconds;
}

std::span<const uint64_t> CpuExecutor::trace() const { return state->lastLaunch.trace; }

} // namespace mk
