// Runs a task graph and its schedule on the CPU, as the GPU megakernel will:
// one emulated SM per schedule queue, each running its queue in order every
// step, waiting on event counters that only grow within a launch. It is the
// reference the GPU runtime is compared against, and a test bench for
// graphs: a deterministic single-thread mode, an adversarial mode that
// perturbs timing, and a checked mode that catches a task reading data that
// is not ready instead of computing garbage.
//
// Nothing is trusted: the constructor validates the graph and schedule
// (core/validator/Validator.h) and binds every weight by name and shape.
// Errors are thrown as ExecutionError; after a failed step the executor
// refuses further work, since its caches may be half written.
#ifndef MKC_RUNTIME_CPU_CPUEXECUTOR_H
#define MKC_RUNTIME_CPU_CPUEXECUTOR_H

#include "core/protocol/Sampling.h"
#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

namespace mk {

class ExecutionError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct CpuExecutorOptions {
  // One std::thread per SM, or all SMs interleaved on the calling thread
  // (round-robin over the queues, one task each: deterministic).
  bool threaded = true;
  // Non-zero: random yields and sleeps before tasks and a random SM start
  // order (threaded), or a random SM order and burst length per round
  // (single thread, still deterministic for a given seed).
  uint64_t adversarialSeed = 0;
  // Every element carries the position of the step that last wrote it; a
  // task reading an element this step has not written (or a KV slot never
  // written) fails with its name.
  bool checked = false;
  // false: only validateStructure(), so that a graph with a missing
  // dependency still runs; tests use it to show that checked mode catches
  // the race.
  bool validateDataflow = true;
  // Buffers (and stamps in checked mode) beyond this are refused.
  uint64_t maxMemoryBytes = uint64_t(16) << 30;
  uint32_t maxThreads = 1024;
  // Every launch records each task's times (trace()); a trace past
  // maxTraceBytes is refused.
  bool trace = false;
  uint64_t maxTraceBytes = uint64_t(1) << 30;
};

// How generate() picks tokens and when it stops early.
struct GenerateOptions {
  // core/protocol/Sampling.h; the repetition penalty counts the tokens this
  // executor fed at every position up to the step's (unknown below a
  // startAt() it never fed: none counted there).
  MkSamplingSettings sampling = mk_sampling_greedy();
  // The launch ends after the first new token that is one of these.
  std::vector<int64_t> eosTokens;
  // Called after each new token is picked, `index` counting from 0, before
  // the next step starts; true ends the launch after that token. An
  // exception it throws fails the launch.
  std::function<bool(int64_t index, int64_t token)> onToken;
};

// Why the last generate() ended before its newTokens.
struct GenerateStop {
  bool atEos = false, byHost = false;
};

// A step of several rows (core/taskgraph/StepRows.h) runs in two ways: a
// prefill graph beside the decode graph (addPrefillGraph), which fills the
// decode graph's KV caches a chunk of positions at a time, and a batch
// graph of its own (generateBatch), a row per sequence. The single-row calls
// (step, generate, ...) need a decode graph: one row, one sequence.
class CpuExecutor {
public:
  // `weights` must outlive the executor; the graph and schedule are copied.
  CpuExecutor(const TaskGraph &graph, const Schedule &schedule, const WeightTable &weights,
              CpuExecutorOptions options = {});
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor &) = delete;
  CpuExecutor &operator=(const CpuExecutor &) = delete;

  // A prefill graph of the same model: M rows of one sequence, the decode
  // graph's KV caches (the same buffers, names and sizes), validated as
  // the decode graph was. generate() then feeds every prompt token but the
  // last through it, M at a time, and the last one through a decode step
  // (unless tracing: a trace is of decode steps, one per position).
  void addPrefillGraph(const TaskGraph &graph, const Schedule &schedule);
  // The rows of the prefill graph's step; 0 without one.
  int64_t prefillRows() const;
  // Feeds `tokens` at the next positions through the prefill graph in one
  // launch of ceil(n / M) steps. Returns the logits of every token ([n]
  // [vocab]) with `everyPosition`, else of the last one.
  std::vector<float> prefill(std::span<const int64_t> tokens, bool everyPosition = false);

  // On a batch graph (rows == sequences): sequence s is fed prompts[s] at
  // its next position (an empty prompt continues from its last token), then
  // generates up to `newTokens` tokens, stopping after an EOS of
  // options.eosTokens; all in one launch, a row per sequence, rows past the
  // prompts given idle. options.onToken is not called. Returns each
  // sequence's new tokens.
  std::vector<std::vector<int64_t>> generateBatch(const std::vector<std::vector<int64_t>> &prompts,
                                                  int64_t newTokens,
                                                  const GenerateOptions &options = {});
  // The next position of sequence s of a batch graph.
  int64_t positionOf(int64_t sequence) const;

  // Teacher forcing: one step with `token` at the next position; returns
  // the logits.
  std::vector<float> step(int64_t token);

  // Feeds `prompt` and generates `newTokens` greedily, all in one launch:
  // the Argmax of each step feeds the next step's Embed through the token
  // buffer once the prompt is consumed. An empty prompt continues from the
  // last generated token. Returns the new tokens.
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt, int64_t newTokens);
  // The same, picking tokens and stopping as `options` say: the new tokens
  // through the one it stopped after. position() advances by the steps run.
  std::vector<int64_t> generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                                const GenerateOptions &options);
  GenerateStop lastStop() const;

  // The next step runs at `position` instead of where the last one left
  // off; the KV slots below it keep what they hold (zeros in a new
  // executor) and are attended to as such. It exists to time a step at a
  // position without feeding a prompt through every position before it:
  // the outputs belong to no real context. In checked mode a step then
  // fails on reading a slot never written. 0 <= position <= maxContext.
  // On a batch graph, every sequence's next position.
  void startAt(int64_t position);
  // Turns options.trace on or off for later launches: an executor kept
  // across calls (libmkrt's continued context) traces only the calls asked.
  void setTrace(bool trace);

  // The next position to be filled.
  int64_t position() const;
  // The logits of the last step run.
  std::span<const float> logits() const;

  // Of the last launch (one step(), or one generate()), by steady_clock:
  // each step's milliseconds, from the previous step's Argmax (step 0: the
  // launch's start) to the end of its own. A generate() that fed its prompt
  // through the prefill graph lists one time per position all the same: the
  // prefill launch's first, each step's shared evenly by the positions it
  // fed, then the decode launch's.
  std::span<const double> stepMilliseconds() const;
  // With options.trace, of the last launch: [steps][tasks][MK_TRACE_TIMES]
  // nanoseconds from the launch's start, laid out as the GPU's trace
  // (runtime/format/ControlBlock.h): when the task's SM began waiting on its
  // events, when they were satisfied, when the task ended (before its
  // trigger). Empty without options.trace.
  std::span<const uint64_t> trace() const;

  // One task alone, on the executor's memory as it stands, for step 0 at
  // `position` with `token` as the step's token: how each task kind's CPU
  // reference is checked against its device function on the same inputs
  // (tests/gpu/TaskKindCheck.cpp), which fills the buffers first. Returns
  // the token buffer's integer afterwards (what an Argmax wrote).
  int64_t runOneTask(uint32_t task, int64_t position, int64_t token);
  // The same, an Argmax picking its token with `sampling`, the repetition
  // penalty counting `context`'s tokens (positions [0, position]).
  int64_t runOneTask(uint32_t task, int64_t position, int64_t token,
                     const MkSamplingSettings &sampling, std::span<const int64_t> context);
  // A buffer's values, to fill or read around runOneTask (the Token buffer
  // has none: its integer is the last Argmax's token).
  std::span<float> bufferValues(uint32_t buffer);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace mk

#endif
