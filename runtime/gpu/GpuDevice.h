// The GPU behind libmkrt: the CUDA driver API, loaded at run time (dlopen of
// libcuda), so that a machine without a GPU gets a clear message instead of a
// missing library.
#ifndef MKC_RUNTIME_GPU_GPUDEVICE_H
#define MKC_RUNTIME_GPU_GPUDEVICE_H

#include "core/protocol/Sampling.h"
#include "runtime/format/Artifact.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mk {

struct GpuRunRequest {
  std::vector<int64_t> tokens; // the prompt, or every token when teacher-forcing
  int64_t newTokens = 0;       // generated after the prompt (0: teacher-forcing only)
  bool teacherForced = false;  // every step's token comes from `tokens`
  bool keepLogits = false;     // copy every step's logits back
  int64_t maxContext = 0;      // positions of the KV arena (<= the compiled one)
  // The position of step 0. The KV slots below it hold what the arena
  // holds (zeros at load, then what earlier runs wrote): for timing a step
  // at a position without a prompt through every position before it.
  int64_t firstPosition = 0;
  bool keepTrace = false;      // record and return every task's times (ControlBlock.h's trace)
  // How the kernel picks tokens (greedy by default); teacher forcing picks
  // greedily whatever this says. The repetition penalty counts
  // `contextTokens`, the tokens at positions [0, firstPosition) (-1:
  // unknown; fewer: unknown), then the prompt and what the run generates.
  MkSamplingSettings sampling = mk_sampling_greedy();
  std::vector<int64_t> contextTokens;
  // Streaming: called on the calling thread with each new token as the
  // running kernel publishes it (`index` from 0), in order; true cancels
  // the run after that token's step (ControlBlock.h's MkStream). The run
  // returns once the kernel has ended and every token was delivered.
  std::function<bool(int64_t index, int64_t token)> onToken;

  // Every step fed from `tokens` from `firstPosition` on, every step's
  // logits kept: what evaluating a text asks.
  static GpuRunRequest teacherForcing(const std::vector<int64_t> &tokens, int64_t firstPosition,
                                      int64_t maxContext) {
    GpuRunRequest request;
    request.tokens = tokens;
    request.firstPosition = firstPosition;
    request.teacherForced = true;
    request.keepLogits = true;
    request.maxContext = maxContext;
    return request;
  }
};

struct GpuRunResult {
  std::vector<int64_t> generated;
  std::vector<float> logits; // [steps, vocab] when asked
  int64_t steps = 0;
  double kernelMilliseconds = 0; // the launch, by CUDA events
  // Each step's time, from the previous step's argmax (step 0: from the
  // launch's start) to its own, by the kernel's %globaltimer.
  std::vector<double> stepMilliseconds;
  std::string stopReason; // "limit", "eos", "host" (onToken's cancel)
  // When asked: u64[steps][numTasks][MK_TRACE_TIMES] of %globaltimer (ns),
  // as the kernel wrote it, and the launch's start on the same clock.
  std::vector<uint64_t> trace;
  uint64_t startNs = 0;
};

// A launch of a kernel of several rows a step (a batch, MkRowPlan): each
// sequence fed its prompt from firstPosition, then new tokens picked with
// `sampling` (each row's draws counted by its own positions), without a
// repetition penalty: the control block's context tokens are one sequence's.
struct GpuBatchRequest {
  std::vector<std::vector<int64_t>> prompts; // one per sequence, each non-empty; at most the rows
  int64_t newTokens = 0;      // each sequence's, after its prompt (0: teacher-forcing only)
  bool teacherForced = false; // every step feeds the prompts' tokens, as long as the longest
  bool keepLogits = false;    // copy every step's logits back
  bool keepTrace = false;     // record and return every task's times (ControlBlock.h's trace)
  int64_t firstPosition = 0;  // every sequence's first position, as GpuRunRequest's
  // Each sequence's own first position instead, where given (one per
  // sequence): a sequence whose prompt ran layer by layer into its caches
  // starts at its last prompt token.
  std::vector<int64_t> firstPositions;
  // With a repetition penalty: each sequence's tokens by position below its
  // first position, where known (-1 where not; as GpuRunRequest's), e.g.
  // a prompt laid into its caches. The penalty counts them, the prompt and
  // the sequence's picks.
  std::vector<std::vector<int64_t>> contextTokens;
  MkSamplingSettings sampling = mk_sampling_greedy();
};

struct GpuBatchResult {
  std::vector<std::vector<int64_t>> generated; // per sequence: its new tokens (teacher
                                               // forcing: every step's pick)
  std::vector<bool> atEos;                     // per sequence: it stopped at an EOS
  std::vector<float> logits;                   // [steps][rows][vocab] when asked; an idle
                                               // row's (past its sequence's steps) zeros
  int64_t steps = 0, rows = 0;
  double kernelMilliseconds = 0;
  std::vector<double> stepMilliseconds;
  // When asked: as GpuRunResult's, of the batch kernel's tasks.
  std::vector<uint64_t> trace;
  uint64_t startNs = 0;
};

// One sequence's keys and values of one attention operation in a loaded
// model's KV arena, as device addresses: [kvHeads][positions][headDim]
// elements of elementBytes each (GpuDevice::sequenceCaches).
struct GpuCacheSlots {
  uint64_t keys = 0, values = 0;
  int64_t positions = 0, kvHeads = 0, headDim = 0;
  uint64_t elementBytes = 0;
};

// A prompt run layer by layer (runtime/gpu/Prefill.h): its tokens at
// firstPosition on, their KV slots written for the decode kernel to go on.
struct GpuPrefillRequest {
  std::vector<int64_t> tokens;
  int64_t firstPosition = 0;
  // Another model's caches of the same shapes, one per attention operation
  // in order (a batch kernel's sequence: GpuDevice::sequenceCaches), which
  // the prompt attends to and writes instead of this model's own; empty:
  // its own. Not with keepLogits or firstToken.
  std::vector<GpuCacheSlots> caches;
  bool keepLogits = false; // every row's logits, [tokens][vocab]
  int64_t maxRows = 0;     // rows a pass (0: GpuPrefill::kMaxRows)
  // The greedy pick of the last row's logits, the first new token (not
  // with keepLogits; where promptPicksFirstToken()).
  bool firstToken = false;
};

struct GpuPrefillResult {
  std::vector<float> logits;
  int64_t firstToken = -1;
  double milliseconds = 0; // by CUDA events around every pass
  int64_t rowsPerPass = 0;
};

// How a call of GpuDevice ended. The callers above (libmkrt, mk-gpu-check)
// tell a machine that cannot run a file, which is no fault, from a GPU that
// failed, which is one.
enum class GpuStatus {
  Ok,
  // This device cannot run this file, and nothing failed: another
  // architecture, fewer SMs than the schedule's queues, no cooperative
  // launch, a CTA that does not fit an SM, no kernel in the file.
  Unsupported,
  // The request is wrong: a token outside the vocabulary, more positions
  // than the context, a trace too big; or the file is: its kernel lacks a
  // variant its schedule needs. Nothing was launched.
  Refused,
  // The driver or the device failed: loading the module, allocating or
  // copying memory, the launch, or the kernel's error word (a wait past its
  // bound, a non-finite logit).
  Failed,
};

// One rank of a tensor-parallel group (runtime/gpu/GpuRanks.h): its event
// counters and activation arena, in its NCCL window, and its MkRanks, as
// device addresses; and what each launch does once this rank's counters
// are cleared, before its kernel starts: wait until every rank's are (false:
// a rank failed, so launch nothing).
struct GpuRankLink {
  uint64_t counters = 0, activations = 0, ranks = 0;
  std::function<bool()> beforeLaunch;
};

// "12.4", the version of the CUDA driver this machine has, or why there is
// none ("not found: libcuda.so.1 ..."). Loads the driver; starts nothing.
std::string cudaDriverVersion();

class GpuDevice {
public:
  // nullptr with `whyNot` set when there is no usable GPU (no driver, no
  // device, unsupported architecture).
  static std::unique_ptr<GpuDevice> open(std::string &whyNot);
  // CUDA device `ordinal` (open is device 0).
  static std::unique_ptr<GpuDevice> openOrdinal(int ordinal, std::string &whyNot);
  // The CUDA devices this machine has (0 without a driver).
  static int count();
  virtual ~GpuDevice() = default;

  virtual std::string describe() const = 0; // "NVIDIA H200, sm_90, 132 SMs"
  virtual int multiprocessors() const = 0;
  // Loads the CUBIN, checks that it holds every kernel variant the graph
  // needs (core/taskgraph/KernelVariants.h), uploads the weights, params and
  // blob, allocates arenas: Ok, Unsupported, Refused or Failed, with `error`
  // saying why when not Ok.
  virtual GpuStatus load(const Artifact &artifact, int64_t maxContext, std::string &error) = 0;
  // Lets the next load use `owner`'s weights where they are the same (the
  // same file's weights section, in the same context: a batch kernel of the
  // file beside its decode kernel) instead of uploading a copy of its own.
  // `owner` must stay loaded as long as this device runs.
  virtual void shareWeightsOf(const GpuDevice &owner) = 0;
  // Where the loaded model's weights are on the device (0 before a load):
  // the same address for two devices that share them.
  virtual uint64_t weightsAddress() const = 0;
  // The same for one rank of a tensor-parallel group (rankArtifact in
  // runtime/format/RankKernel.h), its counters and activations where `link`
  // says; prompts then run one token a step.
  virtual GpuStatus loadRank(const Artifact &artifact, const GpuRankLink &link,
                             int64_t maxContext, std::string &error) = 0;
  // Makes this device's context the calling thread's (for the NCCL calls
  // that allocate on it); false with `error` set when the driver refuses.
  virtual bool makeCurrent(std::string &error) = 0;
  // One launch: all steps in the persistent kernel. Ok, Refused, or Failed
  // (device-side errors: a wait past its bound, a non-finite logit), with
  // `error` saying why when not Ok.
  virtual GpuStatus run(const GpuRunRequest &request, GpuRunResult &result,
                        std::string &error) = 0;
  // One launch of a loaded batch kernel (rowStepArtifact in
  // runtime/format/RowKernels.h): Ok, Refused (no batch kernel, more
  // sequences than rows, a token outside the vocabulary, a prompt past the
  // context), or Failed.
  virtual GpuStatus runBatch(const GpuBatchRequest &request, GpuBatchResult &result,
                             std::string &error) = 0;
  // "" when the loaded model runs prompts layer by layer (prefill), else
  // why not (no cuBLASLt, an older file, a graph without prompt kernels):
  // its prompts then go one token a decode step.
  virtual std::string prefillUnavailable() const = 0;
  // Sequence `sequence`'s caches in the loaded model's KV arena, one per
  // attention operation in the graph's order (for another model's prompt
  // layer by layer: GpuPrefillRequest::caches); empty with `error` set when
  // no model is loaded or it holds fewer sequences.
  virtual std::vector<GpuCacheSlots> sequenceCaches(int64_t sequence,
                                                    std::string &error) const = 0;
  // Which attention prompts layer by layer run, where something other than
  // the prompt kernels' own was asked for (GpuPrefill::attentionChoice):
  // "" otherwise.
  virtual std::string promptAttention() const { return ""; }
  // Whether a prompt layer by layer can also pick its first new token
  // (GpuPrefillRequest::firstToken).
  virtual bool promptPicksFirstToken() const = 0;
  // A prompt layer by layer: Ok, Refused (no prefill, a token outside the
  // vocabulary, positions past the context) or Failed.
  virtual GpuStatus prefill(const GpuPrefillRequest &request, GpuPrefillResult &result,
                            std::string &error) = 0;
  // One task alone on one CTA (the kernel's mk_run_task), for step 0 at
  // `position` with `token` as the step's token, on arenas laid out as
  // layOutArenas (runtime/format/ScheduleBlobBuilder.h) says and filled by
  // the caller: both are uploaded, the task runs, both come back. How each
  // task kind's device function is checked against its CPU reference.
  // An Argmax picks its token with `sampling`, the repetition penalty
  // counting `context`'s tokens (positions [0, position]).
  virtual GpuStatus runTask(uint32_t task, int64_t position, int64_t token,
                            std::vector<float> &activations, std::vector<float> &kv,
                            std::string &error,
                            const MkSamplingSettings &sampling = mk_sampling_greedy(),
                            const std::vector<int64_t> &context = {}) = 0;
};

} // namespace mk

#endif
