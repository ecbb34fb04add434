#include "runtime/cpu/CpuExecutor.h"

#include "core/kernels/Sampling.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/cpu/BindWeights.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/Launch.h"
#include "runtime/cpu/LaunchChecks.h"
#include "runtime/cpu/TaskContext.h"
#include "runtime/cpu/Tasks.h"
#include "runtime/format/ControlBlock.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace mk {

// One graph the executor runs, with its schedule, bound weights and memory.
struct StepProgram {
  TaskGraph graph;
  Schedule schedule;
  std::vector<cpu::BoundOperation> weights;
  std::unique_ptr<cpu::ExecutorMemory> memory;
};

struct CpuExecutor::State {
  CpuExecutorOptions options;
  const WeightTable *table = nullptr;
  StepProgram main;                    // decode, or a batch graph
  std::optional<StepProgram> prefill;  // M rows sharing main's KV caches
  // Vectors (norms, biases) widened from weights held as bf16 or lazily.
  std::map<std::string, std::vector<float>> widenedVectors;
  uint64_t vocabulary = 0; // rows of the smallest embedding table
  std::vector<int64_t> nextPositions; // per sequence
  std::vector<bool> tokenWritten;     // per sequence: a step has picked its token
  int64_t stepsRun = 0;               // every launch's steps: checked mode's stamps
  std::string failure; // set once a launch failed
  cpu::LaunchRecord lastLaunch;
  // Per sequence, the token fed at each position, -1 where none was: what
  // the repetition penalty counts.
  std::vector<std::vector<int64_t>> contextTokens;

  const TaskGraph &graph() const { return main.graph; }
  void checkUsable() const { cpu::checkNotFailed(failure); }
  void checkDecodeGraph(const char *call) const {
    if (main.graph.rows != 1 || main.graph.sequences != 1)
      throw ExecutionError(std::string(call) + " runs one row a step, but the graph's step holds " +
                           std::to_string(main.graph.rows) + " rows over " +
                           std::to_string(main.graph.sequences) +
                           " sequences: use generateBatch");
  }
  void checkTokens(std::span<const int64_t> tokens) const {
    cpu::checkTokensInVocabulary(tokens, vocabulary);
  }
  StepProgram program(const TaskGraph &graph, const Schedule &schedule,
                      const cpu::ExecutorMemory *caches);
  // Runs `plan` on `program`, its steps numbered on from the last launch's.
  void run(StepProgram &program, cpu::LaunchPlan &plan);
  std::vector<int64_t> launch(std::vector<int64_t> forcedTokens, int64_t steps,
                              const GenerateOptions *options = nullptr, int64_t eosFromStep = 0);
};

StepProgram CpuExecutor::State::program(const TaskGraph &graph, const Schedule &schedule,
                                        const cpu::ExecutorMemory *caches) {
  if (std::string problem = cpu::validateProgram(graph, schedule, options); !problem.empty())
    throw ExecutionError("invalid task graph: " + problem);
  cpu::checkLimits(schedule.numSms, "the schedule has " + std::to_string(schedule.numSms) + " SMs",
                   cpu::ExecutorMemory::bytesNeeded(graph, options.checked, caches != nullptr),
                   "the graph's buffers", options);
  StepProgram program;
  program.weights = cpu::bindWeights(graph, *table, widenedVectors);
  program.graph = graph;
  program.schedule = schedule;
  program.memory = std::make_unique<cpu::ExecutorMemory>(program.graph, options.checked, caches);
  return program;
}

CpuExecutor::CpuExecutor(const TaskGraph &graph, const Schedule &schedule,
                         const WeightTable &weights, CpuExecutorOptions options)
    : state(std::make_unique<State>()) {
  state->options = options;
  state->table = &weights;
  state->main = state->program(graph, schedule, nullptr);
  state->nextPositions.assign(graph.sequences, 0);
  state->tokenWritten.assign(graph.sequences, false);
  state->contextTokens.assign(graph.sequences, std::vector<int64_t>(graph.maxContext + 1, -1));
  state->vocabulary = UINT64_MAX;
  for (const Operation &op : graph.operations)
    if (op.kind == OpKind::Embed)
      state->vocabulary = std::min(state->vocabulary, op.weights[0].rows);
}

CpuExecutor::~CpuExecutor() = default;

void CpuExecutor::addPrefillGraph(const TaskGraph &graph, const Schedule &schedule) {
  state->checkUsable();
  state->checkDecodeGraph("a prefill graph beside it");
  if (graph.sequences != 1)
    throw ExecutionError("a prefill graph fills one sequence, but its KV caches hold " +
                         std::to_string(graph.sequences));
  if (!sharesKvCaches(graph, state->main.graph))
    throw ExecutionError("the prefill graph's KV caches are not the decode graph's (the same "
                         "buffers with the same names and sizes): it is of another model or "
                         "context");
  state->prefill.emplace(state->program(graph, schedule, state->main.memory.get()));
}

int64_t CpuExecutor::prefillRows() const {
  return state->prefill ? state->prefill->graph.rows : 0;
}

void CpuExecutor::State::run(StepProgram &program, cpu::LaunchPlan &plan) {
  uint64_t traceBytes =
      uint64_t(plan.steps) * program.graph.tasks.size() * MK_TRACE_TIMES * sizeof(uint64_t);
  if (options.trace && traceBytes > options.maxTraceBytes)
    throw ExecutionError("a trace of " + std::to_string(plan.steps) + " steps of " +
                         std::to_string(program.graph.tasks.size()) + " tasks needs " +
                         std::to_string(traceBytes) + " bytes, more than the " +
                         std::to_string(options.maxTraceBytes) + " allowed: trace fewer steps");
  plan.firstStamp = stepsRun;
  plan.choice.contextTokens = &contextTokens;
  std::string problem = cpu::runLaunch(program.graph, program.schedule, program.weights,
                                       *program.memory, plan, options, lastLaunch);
  stepsRun += plan.steps;
  if (!problem.empty()) {
    failure = problem;
    throw ExecutionError(problem);
  }
}

std::vector<int64_t> CpuExecutor::State::launch(std::vector<int64_t> forcedTokens, int64_t steps,
                                                const GenerateOptions *generate,
                                                int64_t eosFromStep) {
  checkTokens(forcedTokens);
  int64_t &nextPosition = nextPositions[0];
  cpu::checkContextRoom(steps, "more steps", nextPosition, main.graph.maxContext);
  for (size_t i = 0; i < forcedTokens.size(); ++i)
    contextTokens[0][nextPosition + i] = forcedTokens[i];
  cpu::LaunchPlan plan;
  plan.steps = steps;
  plan.rows.push_back({0, nextPosition, 1, std::move(forcedTokens), steps, INT64_MAX});
  if (generate) {
    plan.choice.settings = generate->sampling;
    plan.eosTokens = generate->eosTokens;
    plan.rows[0].eosFromStep = eosFromStep;
    if (generate->onToken)
      plan.onToken = [&, eosFromStep](int64_t step, int64_t, int64_t token) {
        return step >= eosFromStep && generate->onToken(step - eosFromStep, token);
      };
  }
  run(main, plan);
  nextPosition += lastLaunch.stepsDone;
  tokenWritten[0] = true;
  return lastLaunch.argmaxTokens;
}

std::vector<float> CpuExecutor::prefill(std::span<const int64_t> tokens, bool everyPosition) {
  state->checkUsable();
  if (!state->prefill)
    throw ExecutionError("the executor has no prefill graph");
  if (tokens.empty())
    throw ExecutionError("nothing to prefill: no tokens");
  state->checkTokens(tokens);
  StepProgram &program = *state->prefill;
  int64_t rows = program.graph.rows, count = static_cast<int64_t>(tokens.size());
  int64_t &nextPosition = state->nextPositions[0];
  cpu::checkContextRoom(count, "prompt tokens", nextPosition, program.graph.maxContext);
  std::copy(tokens.begin(), tokens.end(), state->contextTokens[0].begin() + nextPosition);
  // Row r of step t is token t * rows + r.
  cpu::LaunchPlan plan;
  plan.steps = (count + rows - 1) / rows;
  plan.keepLogits = everyPosition;
  for (int64_t r = 0; r < rows; ++r) {
    cpu::RowPlan row{0, nextPosition + r, rows, {}, 0, INT64_MAX};
    for (int64_t index = r; index < count; index += rows)
      row.forcedTokens.push_back(tokens[index]);
    row.steps = static_cast<int64_t>(row.forcedTokens.size());
    plan.rows.push_back(std::move(row));
  }
  state->run(program, plan);
  nextPosition += count;
  state->tokenWritten[0] = false; // the decode graph's token buffer holds no pick of these

  // A row of logits: what the one Argmax picks from.
  uint64_t vocab = 0;
  for (const Operation &op : program.graph.operations)
    if (op.kind == OpKind::Argmax)
      vocab = op.inputLength;
  std::vector<float> logits;
  if (!everyPosition) {
    int64_t last = (count - 1) % rows;
    std::span<const float> values = program.memory->values(program.graph.logitsBuffer);
    return std::vector<float>(values.begin() + last * vocab, values.begin() + (last + 1) * vocab);
  }
  for (int64_t index = 0; index < count; ++index) {
    const std::vector<float> &step = state->lastLaunch.logits[index / rows];
    auto row = step.begin() + (index % rows) * vocab;
    logits.insert(logits.end(), row, row + vocab);
  }
  return logits;
}

std::vector<float> CpuExecutor::step(int64_t token) {
  state->checkUsable();
  state->checkDecodeGraph("step()");
  state->launch({token}, 1);
  std::span<const float> values = logits();
  return std::vector<float>(values.begin(), values.end());
}

std::vector<int64_t> CpuExecutor::generate(const std::vector<int64_t> &prompt, int64_t newTokens) {
  return generate(prompt, newTokens, GenerateOptions{});
}

GenerateStop CpuExecutor::lastStop() const {
  if (state->lastLaunch.rowStops.empty())
    return {};
  return {state->lastLaunch.rowStops[0].atEos, state->lastLaunch.rowStops[0].byHost};
}

std::vector<int64_t> CpuExecutor::generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                                           const GenerateOptions &options) {
  state->checkUsable();
  state->checkDecodeGraph("generate()");
  std::string invalid = kernels::checkSamplingSettings(options.sampling);
  if (!invalid.empty())
    throw ExecutionError(invalid);
  if (newTokens < 0)
    throw ExecutionError("cannot generate " + std::to_string(newTokens) + " tokens");
  if (prompt.empty() && !state->tokenWritten[0])
    throw ExecutionError("nothing to continue from: the prompt is empty and no step has run");
  if (newTokens > state->graph().maxContext)
    throw ExecutionError("the context is full: " + std::to_string(newTokens) +
                         " new tokens pass maxContext " + std::to_string(state->graph().maxContext));
  std::vector<int64_t> fedByDecode = prompt;
  std::vector<double> prefillMs; // per prompt position the prefill graph fed
  // A prompt's tokens but its last go through the prefill graph, whose
  // steps fill the caches a chunk at a time; the last one's step picks the
  // first new token. The decode launch checks that it all fits. A traced
  // call runs decode steps only: a trace is of the decode schedule's steps.
  if (state->prefill && !state->options.trace && prompt.size() > 1 && newTokens > 0) {
    state->checkTokens(prompt);
    int64_t need = static_cast<int64_t>(prompt.size()) + newTokens - 1;
    cpu::checkContextRoom(need, "more steps", state->nextPositions[0], state->graph().maxContext);
    prefill(std::span<const int64_t>(prompt).first(prompt.size() - 1));
    int64_t rows = state->prefill->graph.rows, fed = static_cast<int64_t>(prompt.size()) - 1;
    const std::vector<double> &chunks = state->lastLaunch.stepMilliseconds;
    for (int64_t index = 0; index < fed && index / rows < static_cast<int64_t>(chunks.size()); ++index)
      prefillMs.push_back(chunks[index / rows] / std::min(rows, fed - index / rows * rows));
    fedByDecode.assign(1, prompt.back());
  }
  int64_t fed = static_cast<int64_t>(fedByDecode.size());
  // The last prompt step already yields the first new token; the last new
  // token is returned, not fed.
  int64_t steps = fedByDecode.empty() ? newTokens : fed + std::max<int64_t>(newTokens, 1) - 1;
  if (steps == 0)
    return {};
  int64_t first = fedByDecode.empty() ? 0 : fed - 1;
  std::vector<int64_t> tokens = state->launch(fedByDecode, steps, &options, first);
  std::vector<double> &stepMs = state->lastLaunch.stepMilliseconds;
  stepMs.insert(stepMs.begin(), prefillMs.begin(), prefillMs.end());
  int64_t produced = std::clamp<int64_t>(state->lastLaunch.stepsDone - first, 0, newTokens);
  return std::vector<int64_t>(tokens.begin() + first, tokens.begin() + first + produced);
}

std::vector<std::vector<int64_t>>
CpuExecutor::generateBatch(const std::vector<std::vector<int64_t>> &prompts, int64_t newTokens,
                           const GenerateOptions &options) {
  state->checkUsable();
  const TaskGraph &graph = state->graph();
  if (graph.rows != graph.sequences)
    throw ExecutionError("generateBatch needs a row per sequence, but the graph's step holds " +
                         std::to_string(graph.rows) + " rows over " +
                         std::to_string(graph.sequences) + " sequences");
  if (prompts.size() > static_cast<size_t>(graph.rows))
    throw ExecutionError(std::to_string(prompts.size()) + " prompts for a batch of " +
                         std::to_string(graph.rows) + " sequences");
  std::string invalid = kernels::checkSamplingSettings(options.sampling);
  if (!invalid.empty())
    throw ExecutionError(invalid);
  if (newTokens < 1)
    throw ExecutionError("a batch generates at least 1 token, asked for " +
                         std::to_string(newTokens));
  cpu::LaunchPlan plan;
  plan.choice.settings = options.sampling;
  plan.eosTokens = options.eosTokens;
  std::vector<int64_t> firsts;
  for (int64_t s = 0; s < graph.rows; ++s) {
    cpu::RowPlan row{s, state->nextPositions[s], 1, {}, 0, INT64_MAX};
    if (s < static_cast<int64_t>(prompts.size())) {
      const std::vector<int64_t> &prompt = prompts[s];
      state->checkTokens(prompt);
      if (prompt.empty() && !state->tokenWritten[s])
        throw ExecutionError("nothing to continue sequence " + std::to_string(s) +
                             " from: its prompt is empty and no step has run");
      int64_t fed = static_cast<int64_t>(prompt.size());
      row.forcedTokens = prompt;
      row.steps = prompt.empty() ? newTokens : fed + newTokens - 1;
      row.eosFromStep = prompt.empty() ? 0 : fed - 1;
      if (row.steps > graph.maxContext - row.firstPosition)
        throw ExecutionError("the context of sequence " + std::to_string(s) + " is full: " +
                             std::to_string(row.steps) + " more steps from position " +
                             std::to_string(row.firstPosition) + " pass maxContext " +
                             std::to_string(graph.maxContext));
      std::copy(prompt.begin(), prompt.end(),
                state->contextTokens[s].begin() + row.firstPosition);
    }
    firsts.push_back(row.eosFromStep);
    plan.steps = std::max(plan.steps, row.steps);
    plan.rows.push_back(std::move(row));
  }
  state->run(state->main, plan);
  std::vector<std::vector<int64_t>> produced(prompts.size());
  const cpu::LaunchRecord &record = state->lastLaunch;
  for (size_t s = 0; s < prompts.size(); ++s) {
    int64_t ran = 0;
    for (int64_t step = 0; step < record.stepsDone; ++step) {
      int64_t token = record.argmaxTokens[step * graph.rows + s];
      if (token < 0)
        break;
      ++ran;
      if (step >= firsts[s])
        produced[s].push_back(token);
    }
    state->nextPositions[s] += ran;
    state->tokenWritten[s] = true;
  }
  return produced;
}

int64_t CpuExecutor::positionOf(int64_t sequence) const {
  if (sequence < 0 || sequence >= state->graph().sequences)
    throw ExecutionError("sequence " + std::to_string(sequence) + " is not one of the graph's " +
                         std::to_string(state->graph().sequences));
  return state->nextPositions[sequence];
}

int64_t CpuExecutor::runOneTask(uint32_t task, int64_t position, int64_t token) {
  return runOneTask(task, position, token, mk_sampling_greedy(), {});
}

int64_t CpuExecutor::runOneTask(uint32_t task, int64_t position, int64_t token,
                                const MkSamplingSettings &sampling,
                                std::span<const int64_t> context) {
  state->checkUsable();
  state->checkDecodeGraph("runOneTask()");
  const TaskGraph &graph = state->graph();
  if (task >= graph.tasks.size() || position < 0 || position >= graph.maxContext)
    throw ExecutionError(describeTask(graph, task) + " at position " + std::to_string(position) +
                         " is not a task of the graph within its context");
  std::vector<int64_t> argmaxTokens(1, 0);
  std::vector<std::vector<int64_t>> tokensByPosition(1, std::vector<int64_t>(position + 2, -1));
  std::copy_n(context.begin(), std::min<size_t>(context.size(), position + 1),
              tokensByPosition[0].begin());
  cpu::TokenChoice choice{sampling, &tokensByPosition};
  cpu::StepInput input{0, state->stepsRun, {{0, position, token, true}}, &argmaxTokens, &choice};
  const Task &run = graph.tasks[task];
  try {
    cpu::TaskContext context(graph, run, state->main.weights[run.op], *state->main.memory, input);
    cpu::runTask(context);
  } catch (const std::exception &error) {
    throw ExecutionError(error.what());
  }
  return state->main.memory->token(0);
}

std::span<float> CpuExecutor::bufferValues(uint32_t buffer) {
  if (buffer >= state->graph().buffers.size())
    throw ExecutionError("buffer " + std::to_string(buffer) + " is not in the graph");
  return state->main.memory->values(buffer);
}

void CpuExecutor::startAt(int64_t position) {
  state->checkUsable();
  const TaskGraph &graph = state->graph();
  if (graph.rows != graph.sequences)
    state->checkDecodeGraph("startAt()");
  if (position < 0 || position > graph.maxContext)
    throw ExecutionError("start position " + std::to_string(position) + " is outside [0, " +
                         std::to_string(graph.maxContext) + "], the graph's context");
  std::fill(state->nextPositions.begin(), state->nextPositions.end(), position);
}

void CpuExecutor::setTrace(bool trace) { state->options.trace = trace; }

int64_t CpuExecutor::position() const { return state->nextPositions[0]; }

std::span<const float> CpuExecutor::logits() const {
  return state->main.memory->values(state->graph().logitsBuffer);
}

std::span<const double> CpuExecutor::stepMilliseconds() const {
  return state->lastLaunch.stepMilliseconds;
}

std::span<const uint64_t> CpuExecutor::trace() const { return state->lastLaunch.trace; }

} // namespace mk
