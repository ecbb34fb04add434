// The GPU engine: the artifact's megakernel on the device that
// runtime/gpu/GpuDevice.h opens (the CUDA driver, loaded at run time). A
// libmkrt built without that library says so instead.
#include "runtime/mkrt/Engine.h"

#include <algorithm>

#ifdef MKRT_WITH_GPU
#include "runtime/gpu/GpuDevice.h"
#endif

namespace mk::rt {

#ifdef MKRT_WITH_GPU

namespace {

class GpuEngine : public Engine {
public:
  GpuEngine(const Artifact &artifact, std::unique_ptr<GpuDevice> device, int64_t maxContext)
      : artifact(artifact), device(std::move(device)), maxContext(maxContext) {}

  std::string describe() const override { return device->describe(); }

  Generation generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                      int64_t firstPosition, bool trace, bool /*keepCache*/,
                      const TokenPicking &picking) override {
    // The device's cache lives as long as the session: every call finds
    // below its first position what earlier calls wrote.
    GpuRunRequest request;
    request.tokens = prompt;
    request.newTokens = newTokens;
    request.firstPosition = firstPosition;
    request.maxContext = maxContext;
    request.keepTrace = trace;
    request.sampling = picking.sampling;
    request.onToken = picking.onToken;
    request.contextTokens.assign(history.begin(),
                                 history.begin() + std::min<size_t>(firstPosition, history.size()));
    GpuRunResult result = run(request);
    remember(prompt, result.generated, firstPosition);
    Generation generation;
    generation.stoppedByHost = result.stopReason == "host";
    generation.steps = result.steps;
    generation.kernelMs = result.kernelMilliseconds;
    generation.stepMs = std::move(result.stepMilliseconds);
    generation.trace = LaunchTrace{std::move(result.trace), result.startNs};
    // The kernel stops at EOS itself; cutting again keeps both engines'
    // contracts identical should it run a step further.
    generation.tokens =
        cutAtEos(std::move(result.generated), artifact.facts.eosTokens, generation.stoppedAtEos);
    return generation;
  }

  std::vector<float> evalLogits(const std::vector<int64_t> &tokens, int64_t firstPosition,
                                bool /*keepCache*/) override {
    GpuRunRequest request;
    request.tokens = tokens;
    request.firstPosition = firstPosition;
    request.teacherForced = true;
    request.keepLogits = true;
    request.maxContext = maxContext;
    GpuRunResult result = run(request);
    remember(tokens, {}, firstPosition);
    size_t expected = tokens.size() * static_cast<size_t>(artifact.facts.vocab);
    if (result.logits.size() != expected)
      throw EngineError(MKRT_ERROR_EXECUTION, "the GPU returned " +
                                                  std::to_string(result.logits.size()) +
                                                  " logits, expected " + std::to_string(expected));
    return std::move(result.logits);
  }

private:
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
    GpuStatus status = device->run(request, result, error);
    if (status == GpuStatus::Refused)
      throw EngineError(MKRT_ERROR_INVALID_ARGUMENT, "the GPU refused the run: " + error);
    if (status != GpuStatus::Ok)
      throw EngineError(MKRT_ERROR_DEVICE_FAILURE,
                        "the GPU failed (" + device->describe() + "): " + error);
    return result;
  }

  const Artifact &artifact;
  std::unique_ptr<GpuDevice> device;
  int64_t maxContext;
  std::vector<int64_t> history; // by position; -1: unknown
};

} // namespace

std::unique_ptr<Engine> makeGpuEngine(const Artifact &artifact, int64_t maxContext,
                                      std::string &whyNot) {
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
  return std::make_unique<GpuEngine>(artifact, std::move(device), maxContext);
}

#else

std::unique_ptr<Engine> makeGpuEngine(const Artifact &, int64_t, std::string &whyNot) {
  whyNot = "this libmkrt was built without GPU support";
  return nullptr;
}

#endif

} // namespace mk::rt
