// The GPU engine of a tensor-parallel file: its ranks on as many GPUs
// (runtime/gpu/GpuRanks.h), each running the ranks' kernel. Prompts run one
// token a step and the tokens reach onToken once the launch ends; a trace is
// rank 0's; no repetition penalty, no batches yet.
#include "runtime/mkrt/Engine.h"

#include <cstdlib>

#ifdef MKRT_WITH_GPU
#include "runtime/gpu/GpuRanks.h"
#endif

namespace mk::rt {

#ifdef MKRT_WITH_GPU

namespace {

class GpuRanksEngine : public Engine {
public:
  GpuRanksEngine(const Artifact &artifact, std::unique_ptr<GpuRanks> ranks, int64_t maxContext)
      : artifact(artifact), ranks(std::move(ranks)), maxContext(maxContext) {}

  std::string describe() const override { return ranks->describe(); }

  Generation generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                      int64_t firstPosition, bool trace, bool /*keepCache*/,
                      const TokenPicking &picking) override {
    if (mk_sampling_has_penalty(&picking.sampling))
      throw EngineError(MKRT_ERROR_UNSUPPORTED,
                        "tensor-parallel GPUs run no repetition penalty yet (a session on device "
                        "cpu does)");
    GpuRunRequest request;
    request.tokens = prompt;
    request.newTokens = newTokens;
    request.firstPosition = firstPosition;
    request.maxContext = maxContext;
    request.sampling = picking.sampling;
    request.keepTrace = trace;
    GpuRunResult result = run(request);
    Generation generation;
    generation.steps = result.steps;
    generation.kernelMs = result.kernelMilliseconds;
    generation.stepMs = result.stepMilliseconds;
    generation.trace = LaunchTrace{std::move(result.trace), result.startNs, &artifact.ranks[0]};
    generation.tokens = cutAtEos(std::move(result.generated), artifact.facts.eosTokens,
                                 generation.stoppedAtEos);
    // After the launch: a stop asked for cuts the tokens there.
    if (picking.onToken)
      for (size_t i = 0; i < generation.tokens.size(); ++i)
        if (picking.onToken(static_cast<int64_t>(i), generation.tokens[i])) {
          generation.stoppedByHost = i + 1 < generation.tokens.size() || !generation.stoppedAtEos;
          generation.stoppedAtEos = generation.stoppedAtEos && i + 1 == generation.tokens.size();
          generation.tokens.resize(i + 1);
          break;
        }
    return generation;
  }

  std::vector<float> evalLogits(const std::vector<int64_t> &tokens, int64_t firstPosition,
                                bool /*keepCache*/) override {
    GpuRunResult result = run(GpuRunRequest::teacherForcing(tokens, firstPosition, maxContext));
    return teacherForcedLogits(std::move(result.logits), tokens.size(), artifact, "the GPUs");
  }

private:
  GpuRunResult run(const GpuRunRequest &request) {
    GpuRunResult result;
    std::string error;
    GpuStatus status = ranks->run(request, result, error);
    if (status == GpuStatus::Refused)
      throw EngineError(MKRT_ERROR_INVALID_ARGUMENT, "the GPUs refused the run: " + error);
    if (status != GpuStatus::Ok)
      throw EngineError(MKRT_ERROR_DEVICE_FAILURE,
                        "the GPUs failed (" + ranks->describe() + "): " + error);
    return result;
  }

  const Artifact &artifact;
  std::unique_ptr<GpuRanks> ranks;
  int64_t maxContext;
};

} // namespace

std::unique_ptr<Engine> makeGpuRanksEngine(const Artifact &artifact, int64_t maxContext,
                                           std::string &whyNot) {
  GpuStatus status = GpuStatus::Unsupported;
  std::string error;
  const char *oneGpu = std::getenv("MKRT_RANKS_ON_ONE_GPU");
  RanksPlacement placement = oneGpu && std::string(oneGpu) == "1" ? RanksPlacement::OneGpu
                                                                  : RanksPlacement::OwnGpus;
  std::unique_ptr<GpuRanks> ranks = GpuRanks::open(artifact, maxContext, placement, status, error);
  if (status == GpuStatus::Unsupported) {
    whyNot = error;
    return nullptr;
  }
  if (status != GpuStatus::Ok)
    throw EngineError(MKRT_ERROR_DEVICE_FAILURE, "the GPUs failed loading the ranks: " + error);
  return std::make_unique<GpuRanksEngine>(artifact, std::move(ranks), maxContext);
}

#else

std::unique_ptr<Engine> makeGpuRanksEngine(const Artifact &, int64_t, std::string &whyNot) {
  whyNot = "this libmkrt was built without GPU support";
  return nullptr;
}

#endif

} // namespace mk::rt
