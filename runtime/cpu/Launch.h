// One launch: a number of consecutive steps run over the schedule's queues
// with event counters that start at zero and only grow, as one launch of the
// persistent kernel. Waits follow TaskGraph.h: a task of step t waiting on
// event e with offset o may start once counter[e] >= triggerCount[e] *
// (t + 1 + o). A tensor-parallel launch runs every rank's graph at once,
// each with its own counters and memory: an allRanks wait reads every
// rank's counter, an AllReduce every rank's partial sums.
#ifndef MKC_RUNTIME_CPU_LAUNCH_H
#define MKC_RUNTIME_CPU_LAUNCH_H

#include "core/taskgraph/TaskGraph.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/ExecutorMemory.h"
#include "runtime/cpu/TaskContext.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mk::cpu {

// What one row of the graph's step does over a launch: the StepRow of each
// step. Its position moves on by positionsPerStep a step (1; a prefill
// chunk's rows by the chunk).
struct RowPlan {
  int64_t sequence = 0;
  int64_t firstPosition = 0;
  int64_t positionsPerStep = 1;
  std::vector<int64_t> forcedTokens; // the tokens of its first steps
  int64_t steps = INT64_MAX;         // the steps it is active in, from the first
  int64_t eosFromStep = INT64_MAX;   // see LaunchPlan::eosTokens
};

struct LaunchPlan {
  int64_t steps = 0;
  int64_t firstStamp = 0;    // the first step's number in the executor's life
  std::vector<RowPlan> rows; // one per row of the graph's step
  // How tokens are picked; `choice.contextTokens`, when set, holds each
  // sequence's context by position, which the launch extends with each
  // token it feeds.
  TokenChoice choice;
  // A row stops after a step whose token is one of these, from its
  // eosFromStep on, or for which onToken answers true (the host's stop);
  // the launch ends after the step where its last active row stops, as
  // every CTA of the kernel ends after the step whose argmax set the stop
  // flag. onToken is called once per step and active row, in order, on
  // whichever thread ran the step's Argmax, before any task of the next
  // step starts.
  std::vector<int64_t> eosTokens;
  std::function<bool(int64_t step, int64_t row, int64_t token)> onToken;
  // Keeps a copy of the logits buffer after each step (LaunchRecord::logits).
  bool keepLogits = false;
};

struct RowStop {
  bool atEos = false, byHost = false;
};

// What a launch reports besides what it wrote to memory.
struct LaunchRecord {
  std::vector<int64_t> argmaxTokens; // [step][row]; -1 where a row picked nothing
  int64_t stepsDone = 0;             // steps whose Argmax completed
  std::vector<RowStop> rowStops;     // why each row stopped early, if it did
  std::vector<std::vector<float>> logits; // per step, with LaunchPlan::keepLogits
  // Per step, from the previous step's Argmax (step 0: the launch's start)
  // to the end of its own, by steady_clock.
  std::vector<double> stepMilliseconds;
  // With options.trace: [steps][tasks][kTraceTimes] nanoseconds from the
  // launch's start, as the GPU's trace (ControlBlock.h's MkTraceTime); a task
  // that did not run keeps its zeros.
  std::vector<uint64_t> trace;
};

// What one rank runs: its graph, schedule, bound weights and memory.
struct RankProgram {
  const TaskGraph *graph = nullptr;
  const Schedule *schedule = nullptr;
  const std::vector<BoundOperation> *weights = nullptr;
  ExecutorMemory *memory = nullptr;
};

// Returns "" or the first task failure; `record` is filled either way.
std::string runLaunch(const TaskGraph &graph, const Schedule &schedule,
                      const std::vector<BoundOperation> &weights, ExecutorMemory &memory,
                      const LaunchPlan &plan, const CpuExecutorOptions &options,
                      LaunchRecord &record);
// Every rank at once, rank r being graph.rank r: `record` is rank 0's (its
// trace, its times); a rank that picks another token than rank 0 fails the
// launch, since the ranks' logits must be the same bits.
std::string runLaunch(const std::vector<RankProgram> &ranks, const LaunchPlan &plan,
                      const CpuExecutorOptions &options, LaunchRecord &record);

} // namespace mk::cpu

#endif
