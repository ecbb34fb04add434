// The GPU engine: the artifact's megakernel on the device that
// runtime/gpu/GpuDevice.h opens (the CUDA driver, loaded at run time). A
// libmkrt built without that library says so instead.
#include "runtime/mkrt/Engine.h"
#include "core/taskgraph/StepRows.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#ifdef MKRT_WITH_GPU
#include "runtime/format/RowKernels.h"
#include "runtime/gpu/GpuDevice.h"
#endif

namespace mk::rt {

#ifdef MKRT_WITH_GPU

namespace {

// The shortest prompt that runs layer by layer: by step, 32 tokens take
// ~30 ms on the Llama-3.2-1B shape, layer by layer ~2.
constexpr size_t kLayeredPrompt = 32;

class GpuEngine : public Engine {
public:
  GpuEngine(const Artifact &artifact, std::unique_ptr<GpuDevice> device, int64_t maxContext,
            std::string note)
      : artifact(artifact), device(std::move(device)), maxContext(maxContext),
        note(std::move(note)) {}

  std::string describe() const override {
    std::string notes = note;
    if (std::string attention = device->promptAttention(); !attention.empty())
      notes += (notes.empty() ? "prompts' attention: " : "; prompts' attention: ") + attention;
    return device->describe() + (notes.empty() ? "" : " (" + notes + ")");
  }
  void setPromptByStep(bool byStep) override { promptByStep = byStep; }

  Generation generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                      int64_t firstPosition, bool trace, bool /*keepCache*/,
                      const TokenPicking &picking) override {
    // The device's cache lives as long as the session: every call finds
    // below its first position what earlier calls wrote.
    // A prompt of kLayeredPrompt tokens or more goes layer by layer. A
    // greedy pick without a penalty then comes from the prompt's last row
    // itself (GpuPrefill::firstToken) and the decode kernel goes on from it;
    // otherwise the prompt's last token goes through the decode kernel,
    // whose sampler picks. A shorter prompt goes by step: little time, and
    // the CPU's logits to the last bits, where the layer by layer GEMMs'
    // bf16 inputs move them by up to ~1e-2 (mkrt.h). (A trace is of decode
    // steps: its prompt goes by step.)
    const bool layered = prompt.size() >= kLayeredPrompt && !promptByStep && !trace &&
                         device->prefillUnavailable().empty();
    const bool firstFromPrompt = layered && newTokens > 0 && device->promptPicksFirstToken() &&
                                 mk_sampling_is_greedy(&picking.sampling) &&
                                 !mk_sampling_has_penalty(&picking.sampling);
    const size_t prefilled = !layered ? 0 : firstFromPrompt ? prompt.size() : prompt.size() - 1;
    double prefillMs = 0;
    std::vector<int64_t> generated;
    bool cancelled = false;
    if (layered) {
      GpuPrefillRequest prefill;
      prefill.tokens.assign(prompt.begin(), prompt.begin() + static_cast<int64_t>(prefilled));
      prefill.firstPosition = firstPosition;
      prefill.firstToken = firstFromPrompt;
      GpuPrefillResult done;
      std::string error;
      answer(device->prefill(prefill, done, error), "prompt", error);
      prefillMs = done.milliseconds;
      remember(prefill.tokens, {}, firstPosition);
      if (firstFromPrompt) {
        generated.push_back(done.firstToken);
        cancelled = picking.onToken && picking.onToken(0, done.firstToken);
      }
    }
    const auto &eos = artifact.facts.eosTokens;
    const bool finished =
        firstFromPrompt && (newTokens == 1 || cancelled ||
                            std::find(eos.begin(), eos.end(), generated[0]) != eos.end());
    GpuRunResult result;
    if (!finished) {
      GpuRunRequest request;
      if (firstFromPrompt)
        request.tokens = generated;
      else
        request.tokens.assign(prompt.begin() + static_cast<int64_t>(prefilled), prompt.end());
      request.newTokens = newTokens - static_cast<int64_t>(generated.size());
      request.firstPosition = firstPosition + static_cast<int64_t>(prefilled);
      request.maxContext = maxContext;
      request.keepTrace = trace;
      request.sampling = picking.sampling;
      request.onToken = picking.onToken;
      if (firstFromPrompt && picking.onToken)
        request.onToken = [&picking](int64_t index, int64_t token) {
          return picking.onToken(index + 1, token);
        };
      request.contextTokens.assign(
          history.begin(),
          history.begin() + std::min<size_t>(request.firstPosition, history.size()));
      result = run(request);
      remember(request.tokens, result.generated, request.firstPosition);
      generated.insert(generated.end(), result.generated.begin(), result.generated.end());
    }
    Generation generation;
    generation.stoppedByHost = cancelled || result.stopReason == "host";
    generation.steps = result.steps + static_cast<int64_t>(prefilled);
    generation.kernelMs = result.kernelMilliseconds + prefillMs;
    // The prefilled positions share the prompt's time evenly, as the CPU's
    // prefill chunks do, so that the prompt's figures add up (with the first
    // token picked from the prompt, its time is the prompt's).
    generation.stepMs.assign(prefilled, prefilled ? prefillMs / prefilled : 0.0);
    generation.stepMs.insert(generation.stepMs.end(), result.stepMilliseconds.begin(),
                             result.stepMilliseconds.end());
    generation.trace = LaunchTrace{std::move(result.trace), result.startNs};
    // The kernel stops at EOS itself; cutting again keeps both engines'
    // contracts identical should it run a step further.
    generation.tokens = cutAtEos(std::move(generated), eos, generation.stoppedAtEos);
    return generation;
  }

  std::vector<float> evalLogits(const std::vector<int64_t> &tokens, int64_t firstPosition,
                                bool /*keepCache*/) override {
    GpuRunResult result = run(GpuRunRequest::teacherForcing(tokens, firstPosition, maxContext));
    remember(tokens, {}, firstPosition);
    return teacherForcedLogits(std::move(result.logits), tokens.size(), artifact, "the GPU");
  }

  // On the smallest batch kernel of at least that many sequences, loaded on
  // its first use beside the decode kernel (its own arenas, the decode
  // kernel's weights), greedy or sampled, the repetition penalty counting
  // each sequence's own tokens. A prompt of kLayeredPrompt tokens or more
  // runs layer by layer first, as a session's does (the decode model's
  // prompt kernels, writing the batch's caches of its sequence: the
  // session's own cache is not touched), all but its last token; the batch
  // kernel starts that sequence at its last token, the others as before.
  BatchGeneration generateBatch(const std::vector<std::vector<int64_t>> &prompts,
                                int64_t newTokens, int64_t firstPosition, bool trace,
                                const TokenPicking &picking) override {
    GpuBatchEngine &batch = batchFor(static_cast<int64_t>(prompts.size()));
    GpuBatchRequest request;
    request.prompts = prompts;
    request.newTokens = newTokens;
    request.firstPosition = firstPosition;
    request.keepTrace = trace;
    const double promptMs = layBatchPrompts(batch, request);
    request.sampling = picking.sampling;
    // Where every prompt was laid, the kernel's first step runs the
    // shortest one's last token: the positions before it share the prompts'
    // time evenly, as one sequence's prefilled positions do, so that step s
    // is still position s of the shortest sequence (mkrun --step-times).
    size_t prefilled = 0;
    if (!request.firstPositions.empty()) {
      prefilled = std::numeric_limits<size_t>::max();
      for (int64_t first : request.firstPositions)
        prefilled = std::min(prefilled, static_cast<size_t>(first - request.firstPosition));
    }
    GpuBatchResult result;
    std::string error;
    answer(batch.device->runBatch(request, result, error), "batch", error);
    BatchGeneration batched;
    batched.rowStep = batch.rowStep;
    batched.trace = LaunchTrace{std::move(result.trace), result.startNs};
    std::vector<Generation> &generations = batched.sequences;
    generations.resize(prompts.size());
    for (size_t s = 0; s < prompts.size(); ++s) {
      Generation &generation = generations[s];
      generation.tokens = cutAtEos(std::move(result.generated[s]), artifact.facts.eosTokens,
                                   generation.stoppedAtEos);
      generation.steps = result.steps + static_cast<int64_t>(prefilled);
      generation.kernelMs = result.kernelMilliseconds + promptMs;
      generation.stepMs.assign(prefilled, prefilled ? promptMs / prefilled : 0.0);
      generation.stepMs.insert(generation.stepMs.end(), result.stepMilliseconds.begin(),
                               result.stepMilliseconds.end());
    }
    return batched;
  }

private:
  struct GpuBatchEngine {
    int64_t rows = 0;
    size_t rowStep = 0;                 // its graph: the artifact's rowSteps[rowStep]
    std::unique_ptr<Artifact> artifact; // the step's view of the file
    std::unique_ptr<GpuDevice> device;
  };

  // Runs the long prompts of `request` layer by layer into the batch's
  // caches and leaves their last tokens to the batch kernel (generateBatch);
  // the prompts' time, in milliseconds.
  double layBatchPrompts(const GpuBatchEngine &batch, GpuBatchRequest &request) {
    if (promptByStep || request.keepTrace || !device->prefillUnavailable().empty())
      return 0;
    double milliseconds = 0;
    for (size_t s = 0; s < request.prompts.size(); ++s) {
      const std::vector<int64_t> prompt = request.prompts[s];
      if (prompt.size() < kLayeredPrompt)
        continue;
      std::string error;
      GpuPrefillRequest prefill;
      prefill.tokens.assign(prompt.begin(), prompt.end() - 1);
      prefill.firstPosition = request.firstPosition;
      prefill.caches = batch.device->sequenceCaches(static_cast<int64_t>(s), error);
      if (prefill.caches.empty())
        answer(GpuStatus::Failed, "batch's caches", error);
      GpuPrefillResult done;
      answer(device->prefill(prefill, done, error), "batch's prompt", error);
      milliseconds += done.milliseconds;
      if (request.firstPositions.empty())
        request.firstPositions.assign(request.prompts.size(), request.firstPosition);
      request.firstPositions[s] = request.firstPosition + static_cast<int64_t>(prompt.size()) - 1;
      request.prompts[s] = {prompt.back()};
      // The laid tokens, for the repetition penalty.
      if (request.contextTokens.empty())
        request.contextTokens.resize(request.prompts.size());
      request.contextTokens[s].assign(request.firstPosition, -1);
      request.contextTokens[s].insert(request.contextTokens[s].end(), prompt.begin(),
                                      prompt.end() - 1);
    }
    return milliseconds;
  }

  GpuBatchEngine &batchFor(int64_t sequences) {
    size_t chosen = artifact.rowSteps.size();
    for (size_t step = 0; step < artifact.rowSteps.size(); ++step) {
      const TaskGraph &graph = artifact.rowSteps[step].graph;
      if (isBatchStep(graph) && graph.rows >= sequences &&
          hasRowKernel(artifact, step) &&
          (chosen == artifact.rowSteps.size() ||
           graph.rows < artifact.rowSteps[chosen].graph.rows))
        chosen = step;
    }
    if (chosen == artifact.rowSteps.size())
      throw EngineError(MKRT_ERROR_UNSUPPORTED,
                        "the file holds no batch kernel of " + std::to_string(sequences) +
                            " or more sequences (mkc compile --batch=B makes one)");
    for (GpuBatchEngine &loaded : batches)
      if (loaded.rows == artifact.rowSteps[chosen].graph.rows)
        return loaded;
    GpuBatchEngine loaded;
    loaded.rows = artifact.rowSteps[chosen].graph.rows;
    loaded.rowStep = chosen;
    std::string error;
    loaded.artifact = rowStepArtifact(artifact, chosen, error);
    if (!loaded.artifact)
      throw EngineError(MKRT_ERROR_INVALID_MODEL, error);
    loaded.device = GpuDevice::open(error);
    if (!loaded.device)
      throw EngineError(MKRT_ERROR_DEVICE_FAILURE, "opening the GPU for a batch: " + error);
    // The same file's weights: one copy on the GPU, the decode kernel's
    // (which `device`, declared before `batches`, outlives).
    loaded.device->shareWeightsOf(*device);
    GpuStatus status = loaded.device->load(*loaded.artifact, maxContext, error);
    if (status != GpuStatus::Ok)
      throw EngineError(status == GpuStatus::Failed ? MKRT_ERROR_DEVICE_FAILURE
                                                    : MKRT_ERROR_UNSUPPORTED,
                        "loading the batch of " + std::to_string(loaded.rows) +
                            " on the GPU: " + error);
    batches.push_back(std::move(loaded));
    return batches.back();
  }

  // The tokens the device's cache now holds by position, for the next
  // call's repetition penalty: the fed ones, and each generated one but the
  // last (which is not fed).
  void remember(const std::vector<int64_t> &fed, const std::vector<int64_t> &generated,
                int64_t firstPosition) {
    size_t end = firstPosition + fed.size() + (generated.empty() ? 0 : generated.size() - 1);
    if (history.size() < end)
      history.resize(end, -1);
    std::copy(fed.begin(), fed.end(), history.begin() + firstPosition);
    if (!generated.empty())
      std::copy(generated.begin(), generated.end() - 1,
                history.begin() + firstPosition + fed.size());
  }

  GpuRunResult run(const GpuRunRequest &request) {
    GpuRunResult result;
    std::string error;
    answer(device->run(request, result, error), "run", error);
    return result;
  }

  // A call's status as the C API's: a refused request (the `what`) is the
  // caller's error, any other failure the device's.
  void answer(GpuStatus status, const char *what, const std::string &error) const {
    if (status == GpuStatus::Refused)
      throw EngineError(MKRT_ERROR_INVALID_ARGUMENT,
                        std::string("the GPU refused the ") + what + ": " + error);
    if (status != GpuStatus::Ok)
      throw EngineError(MKRT_ERROR_DEVICE_FAILURE,
                        "the GPU failed (" + device->describe() + "): " + error);
  }

  const Artifact &artifact;
  std::unique_ptr<GpuDevice> device;
  int64_t maxContext;
  std::vector<int64_t> history; // by position; -1: unknown
  bool promptByStep = false;    // mkrt_session_set_prompt_by_step
  std::vector<GpuBatchEngine> batches; // loaded on first use, by their rows
  std::string note;                    // why a file of ranks runs whole here
};

} // namespace

std::unique_ptr<Engine> makeGpuEngine(const Artifact &artifact, int64_t maxContext,
                                      std::string &whyNot) {
  auto set = [](const char *name) {
    const char *value = std::getenv(name);
    return value && std::string(value) == "1";
  };
  // Where the ranks cannot run (no NCCL, another version), the whole model
  // does, on one GPU, saying why.
  std::string note;
  if (!artifact.rankKernel.cubin.empty() && !set("MKRT_ONE_GPU") &&
      (set("MKRT_RANKS_ON_ONE_GPU") ||
       GpuDevice::count() >= static_cast<int>(artifact.ranks.size()))) {
    std::unique_ptr<Engine> ranks = makeGpuRanksEngine(artifact, maxContext, note);
    if (ranks)
      return ranks;
    note = "the whole model on one GPU: its ranks cannot run here: " + note;
  }
  std::unique_ptr<GpuDevice> device = GpuDevice::open(whyNot);
  if (!device)
    return nullptr;
  if (!hasKernel(artifact)) {
    whyNot = "the artifact has no kernel (compiled with --no-kernel, or where NVRTC was "
             "missing); run it on the CPU";
    return nullptr;
  }
  std::string error;
  GpuStatus loaded = device->load(artifact, maxContext, error);
  if (loaded == GpuStatus::Unsupported) {
    whyNot = device->describe() + " cannot run this file: " + error;
    return nullptr;
  }
  if (loaded == GpuStatus::Refused)
    throw EngineError(MKRT_ERROR_INVALID_MODEL, "the GPU refused the model: " + error);
  if (loaded != GpuStatus::Ok)
    throw EngineError(MKRT_ERROR_DEVICE_FAILURE,
                      "the GPU failed loading the model (" + device->describe() + "): " + error);
  return std::make_unique<GpuEngine>(artifact, std::move(device), maxContext, std::move(note));
}

#else

std::unique_ptr<Engine> makeGpuEngine(const Artifact &, int64_t, std::string &whyNot) {
  whyNot = "this libmkrt was built without GPU support";
  return nullptr;
}

#endif

} // namespace mk::rt
