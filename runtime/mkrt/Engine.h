// What runs a loaded .mk for libmkrt's sessions: the CPU executor of the
// task graph, or the GPU megakernel. Each call starts a new context at its
// first position (0 but for timing a step at a position: mkrt.h's
// mkrt_session_set_start_position). Failures are thrown as EngineError with
// the C API status they map to.
#ifndef MKC_RUNTIME_MKRT_ENGINE_H
#define MKC_RUNTIME_MKRT_ENGINE_H

#include "core/protocol/Sampling.h"
#include "runtime/format/ArtifactFile.h"
#include "runtime/mkrt/include/mkrt.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk::rt {

class EngineError : public std::runtime_error {
public:
  EngineError(mkrt_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  mkrt_status status;
};

// Every task's times in one launch, as ControlBlock.h lays out the trace:
// [steps][tasks][MK_TRACE_TIMES] nanoseconds on the engine's clock (0: not
// run), and the launch's start on that clock; `graph`: whose tasks, when
// not the artifact's decode graph (a rank's: rank 0's times).
struct LaunchTrace {
  std::vector<uint64_t> times;
  uint64_t startNs = 0;
  const ScheduledGraph *graph = nullptr;
};

// How a generation picks its tokens, and whom it tells of each.
struct TokenPicking {
  MkSamplingSettings sampling = mk_sampling_greedy();
  // Each new token as it is produced, `index` from 0, in order, before the
  // next step runs (the CPU) or while the kernel runs (the GPU); true stops
  // the generation after that token.
  std::function<bool(int64_t index, int64_t token)> onToken;
};

struct Generation {
  std::vector<int64_t> tokens; // the new tokens, through the first EOS
  int64_t steps = 0;           // decode steps run
  double kernelMs = -1;        // the launch alone, when the engine can tell
  bool stoppedAtEos = false;
  bool stoppedByHost = false;  // onToken asked to stop
  std::vector<double> stepMs;  // per step run, the first position first
  LaunchTrace trace;           // when asked
};

// A batch's launch: a Generation per sequence (its stepMs and steps the
// launch's) and, when asked, the trace of the batch step's tasks: those of
// the artifact's rowSteps[rowStep].
struct BatchGeneration {
  std::vector<Generation> sequences;
  LaunchTrace trace;
  size_t rowStep = 0;
};

class Engine {
public:
  virtual ~Engine() = default;
  virtual std::string describe() const = 0;
  // mkrt_session_set_prompt_by_step: prompts one token a decode step
  // instead of layer by layer, where the engine can do the latter (the GPU).
  virtual void setPromptByStep(bool /*byStep*/) {}
  // A non-empty prompt within the vocabulary, its first token at
  // `firstPosition`, firstPosition + prompt + newTokens - 1 positions within
  // the session's context: the caller checks. The cache slots below
  // firstPosition hold what the engine's cache holds: zeros on the CPU (a
  // new executor per call), on the GPU zeros at load and then what earlier
  // calls wrote. `trace`: record every task's times too. `keepCache`: the
  // cache below firstPosition is the one earlier keepCache calls wrote, on
  // the CPU too (one executor kept for them, instead of a new one per call),
  // so that a call continues a context (mkrt_continue).
  // The repetition penalty counts the tokens this engine fed at the
  // positions below firstPosition (unknown ones: none).
  virtual Generation generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                              int64_t firstPosition, bool trace, bool keepCache,
                              const TokenPicking &picking) = 0;
  // [tokens, vocab] logits, row by row, the first token at `firstPosition`;
  // `keepCache` as for generate.
  virtual std::vector<float> evalLogits(const std::vector<int64_t> &tokens,
                                        int64_t firstPosition, bool keepCache) = 0;
  // Each prompt (non-empty, within the vocabulary and the context: the
  // caller checks) a new sequence from `firstPosition` (the slots below it
  // as generate's), all in one launch of a batch step; `trace`: record
  // every task's times too. Throws
  // EngineError(MKRT_ERROR_UNSUPPORTED) where the engine or the artifact has
  // no batch step for that many.
  virtual BatchGeneration generateBatch(const std::vector<std::vector<int64_t>> &prompts,
                                        int64_t newTokens, int64_t firstPosition,
                                        bool trace, const TokenPicking &picking);
};

// The artifact must outlive the engine.
std::unique_ptr<Engine> makeCpuEngine(const Artifact &artifact);

// nullptr with `whyNot` set when this machine or this artifact cannot run on
// a GPU, and nothing failed: no driver, no device, no kernel in the file, a
// GPU that cannot run it. A GPU that fails to load the model throws
// EngineError(MKRT_ERROR_DEVICE_FAILURE).
// A file with a kernel of ranks (--tensor-parallel=N, RANKKERNEL) runs its
// ranks on GPUs 0..N-1 where the machine has them and MKRT_ONE_GPU is not 1
// (makeGpuRanksEngine; with MKRT_RANKS_ON_ONE_GPU=1 all on GPU 0, a check);
// otherwise, or where the ranks cannot run (its describe() says why), the
// whole model on GPU 0.
std::unique_ptr<Engine> makeGpuEngine(const Artifact &artifact, int64_t maxContext,
                                      std::string &whyNot);
// The ranks on their GPUs; nullptr with `whyNot` set when this machine
// cannot (fewer GPUs, no NCCL of the kernel's version); throws as
// makeGpuEngine.
std::unique_ptr<Engine> makeGpuRanksEngine(const Artifact &artifact, int64_t maxContext,
                                           std::string &whyNot);

// `logits` of a teacher-forced run of `tokens` tokens, checked to be
// [tokens][vocab]; else EngineError(MKRT_ERROR_EXECUTION) naming `engine`.
std::vector<float> teacherForcedLogits(std::vector<float> logits, size_t tokens,
                                       const Artifact &artifact, const std::string &engine);

// The tokens up to and including the first EOS of the model.
std::vector<int64_t> cutAtEos(std::vector<int64_t> tokens, const std::vector<int64_t> &eos,
                              bool &stopped);

} // namespace mk::rt

#endif
