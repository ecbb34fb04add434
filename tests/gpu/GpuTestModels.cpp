#include "GpuTestModels.h"

#include "ToyTaskGraph.h"

#include "codegen/Megakernel.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/RandomWeights.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/WeightPacking.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mk {

std::optional<Model> loadModel(const std::string &path, int64_t maxContext,
                               const TargetDescription &target,
                               const std::vector<int64_t> &batches) {
  if (path == "--toy") {
    toy::ToyModel model = toy::buildToyModel();
    // The toy's caches keep what the target asks for, like a lowered model's.
    for (Buffer &buffer : model.graph.buffers)
      if (buffer.kind == BufferKind::KVCache)
        buffer.element = target.kvCache;
    if (target.inlineMerge)
      toy::inlineMerges(model);
    return Model{std::move(model.graph), std::move(model.schedule), std::move(model.weights)};
  }
  mlir::MLIRContext context;
  CompileOptions options;
  options.maxContext = maxContext;
  options.target = target;
  options.batchSizes = batches;
  auto compiled = compileToSchedule(context, path, options);
  if (!compiled) {
    std::printf("cannot compile %s: %s\n", path.c_str(),
                llvm::toString(compiled.takeError()).c_str());
    return std::nullopt;
  }
  bool shapeOnly = compiled->imported.weights.all().empty();
  WeightTable weights =
      shapeOnly ? randomWeights(compiled->tasks) : std::move(compiled->imported.weights);
  return Model{std::move(compiled->tasks), std::move(compiled->schedule), std::move(weights),
               std::move(compiled->rowSteps)};
}

std::vector<float> cpuLogits(const Artifact &artifact, const std::vector<int64_t> &tokens) {
  WeightTable weights = unpackWeights(artifact.weights, artifact.weightData);
  CpuExecutor executor(artifact.graph, artifact.schedule, weights);
  std::vector<float> logits;
  for (int64_t token : tokens) {
    std::vector<float> step = executor.step(token);
    logits.insert(logits.end(), step.begin(), step.end());
  }
  return logits;
}

std::vector<int64_t> someTokens(int64_t count, int64_t vocab, uint64_t seed) {
  std::vector<int64_t> tokens;
  uint64_t state = seed;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    tokens.push_back(static_cast<int64_t>((state >> 33) % vocab));
  }
  return tokens;
}

Row rowFacts(const float *logits, int64_t vocab) {
  size_t best = std::max_element(logits, logits + vocab) - logits;
  float second = -INFINITY;
  for (int64_t i = 0; i < vocab; ++i)
    if (static_cast<size_t>(i) != best)
      second = std::max(second, logits[i]);
  return {best, logits[best] - second};
}

std::unique_ptr<BuiltArtifact> compile(const Model &model, std::vector<int64_t> eos,
                                       const KernelOptions &options) {
  auto kernel = compileMegakernel(model.graph, model.schedule, kDefaultArch, options);
  if (!kernel) {
    std::printf("NVRTC failed: %s\n", llvm::toString(kernel.takeError()).c_str());
    return nullptr;
  }
  std::printf("  kernel: %d registers, %d bytes shared, %d bytes spilled, %.2f s to compile\n",
              kernel->registers, kernel->sharedBytes, kernel->spillBytes, kernel->compileSeconds);
  ArtifactOptions artifact;
  artifact.eosTokens = std::move(eos);
  artifact.cubin = std::move(kernel->cubin);
  artifact.ptx = std::move(kernel->ptx);
  std::string error;
  auto built =
      buildArtifact(model.graph, model.schedule, model.weights, std::move(artifact), error);
  if (!built)
    std::printf("cannot build the artifact: %s\n", error.c_str());
  return built;
}

std::unique_ptr<GpuDevice> openDeviceOrSkip() {
  std::string whyNot;
  std::unique_ptr<GpuDevice> device = GpuDevice::open(whyNot);
  if (!device)
    std::printf("SKIP: %s\n", whyNot.c_str());
  return device;
}

bool takeModelFlag(const std::string &arg, int64_t &maxContext, TargetDescription &target) {
  if (arg.rfind("--max-context=", 0) == 0) {
    maxContext = std::stoll(arg.substr(14));
    return true;
  }
  if (arg == "--kv-cache=bf16") {
    target.kvCache = BufferElement::BF16;
    return true;
  }
  if (arg == "--merge-in-o-proj") {
    target.mergeInOProj = true;
    return true;
  }
  if (arg == "--o-proj-by-head" || arg == "--o-proj-by-head=on") {
    target.oProjByHead = TargetDescription::ByHead::On;
    return true;
  }
  if (arg == "--o-proj-by-head=off") {
    target.oProjByHead = TargetDescription::ByHead::Off;
    return true;
  }
  return false;
}

int loadOnDevice(GpuDevice &device, const Artifact &artifact) {
  std::string error;
  GpuStatus loaded = device.load(artifact, 0, error);
  if (loaded == GpuStatus::Unsupported) {
    std::printf("SKIP: %s cannot run this file: %s\n", device.describe().c_str(), error.c_str());
    return kSkipExit;
  }
  if (loaded != GpuStatus::Ok) {
    std::printf("FAIL: the GPU failed loading the model: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

} // namespace mk
