// GpuDevice on the CUDA driver API (CudaDriver.h): one device, its primary
// context, one loaded megakernel and the memory of one model.
//
// A launch is cooperative (cuLaunchCooperativeKernel): the persistent CTAs
// wait on each other, so all of them must be resident at once, which the
// driver then guarantees or refuses; load() checks beforehand that one CTA
// per SM fits and that the schedule has no more queues than the device SMs.
#include "runtime/gpu/GpuDevice.h"

#include "core/taskgraph/KernelVariants.h"
#include "runtime/format/ControlBlock.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/DeviceErrors.h"
#include "runtime/gpu/DeviceMemory.h"
#include "runtime/gpu/LoadProgress.h"
#include "runtime/gpu/MappedHostMemory.h"
#include "runtime/gpu/MemoryBudget.h"
#include "runtime/gpu/Prefill.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <thread>
#include <tuple>

namespace mk {

namespace {

// One wait of the kernel longer than this ends the launch with
// MK_ERROR_WAIT_TIMEOUT: far above any task's time, short enough that a
// broken schedule does not hold the GPU.
constexpr uint64_t kWaitTimeoutNs = 2'000'000'000;

// A trace is 24 bytes per task and step; past this it is a mistake (a huge
// context traced whole), not a measurement.
constexpr uint64_t kMaxTraceBytes = uint64_t(1) << 30;

// Device memory a model must leave free after its own arenas: a launch's
// token, logit and timestamp buffers and the driver's own needs.
constexpr uint64_t kLaunchReserveBytes = uint64_t(256) << 20;

struct DeviceFacts {
  std::string name;
  int major = 0, minor = 0, smCount = 0, cooperative = 0;
};

// "sm_90a": compute capability 9.0; the "a" (architecture-specific) code
// runs on exactly that capability, plain code on any later minor revision.
struct ArchName {
  int major = 0, minor = 0;
  bool specific = false;
};

std::optional<ArchName> parseArch(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return std::nullopt;
  std::string digits = arch.substr(3);
  ArchName parsed;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    parsed.specific = true;
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  parsed.major = std::stoi(digits.substr(0, digits.size() - 1));
  parsed.minor = digits.back() - '0';
  return parsed;
}

std::string deviceArch(const DeviceFacts &facts) {
  return "sm_" + std::to_string(facts.major) + std::to_string(facts.minor);
}

class CudaGpuDevice final : public GpuDevice {
public:
  CudaGpuDevice(const CudaDriver &cuda, CUdevice device, CUcontext context, DeviceFacts facts)
      : cuda(cuda), device(device), context(context), facts(std::move(facts)) {}

  ~CudaGpuDevice() override {
    cuda.cuCtxSetCurrent(context);
    releaseModel();
    cuda.cuDevicePrimaryCtxRelease(device);
  }

  std::string describe() const override {
    return facts.name + ", " + deviceArch(facts) + ", " + std::to_string(facts.smCount) + " SMs";
  }
  int multiprocessors() const override { return facts.smCount; }

  GpuStatus load(const Artifact &artifact, int64_t maxContext, std::string &error) override;
  void shareWeightsOf(const GpuDevice &owner) override {
    weightsOwner = dynamic_cast<const CudaGpuDevice *>(&owner);
  }
  uint64_t weightsAddress() const override {
    return borrowedWeights ? borrowedWeights : weights.get();
  }
  GpuStatus loadRank(const Artifact &artifact, const GpuRankLink &link, int64_t maxContext,
                     std::string &error) override {
    rank = link;
    GpuStatus status = load(artifact, maxContext, error);
    // Its own stream: ranks sharing a GPU (GpuRanks' check on one GPU) run
    // their kernels side by side, which the default stream would serialize.
    if (status == GpuStatus::Ok &&
        !check(cuda.cuStreamCreate(&launchStream, CU_STREAM_NON_BLOCKING), "creating a stream",
               error))
      status = GpuStatus::Failed;
    if (status != GpuStatus::Ok)
      rank.reset();
    return status;
  }
  bool makeCurrent(std::string &error) override {
    return check(cuda.cuCtxSetCurrent(context), "making the context current", error);
  }
  GpuStatus run(const GpuRunRequest &request, GpuRunResult &result, std::string &error) override;
  GpuStatus runBatch(const GpuBatchRequest &request, GpuBatchResult &result,
                     std::string &error) override;
  GpuStatus runTask(uint32_t task, int64_t position, int64_t token, std::vector<float> &activations,
                    std::vector<float> &kv, std::string &error,
                    const MkSamplingSettings &sampling,
                    const std::vector<int64_t> &context) override;
  std::string prefillUnavailable() const override {
    return prompts ? "" : whyNoPrompts.empty() ? "no model is loaded" : whyNoPrompts;
  }
  bool promptPicksFirstToken() const override { return prompts && prompts->picksFirstToken(); }
  std::string promptAttention() const override {
    return prompts ? prompts->attentionChoice() : "";
  }
  std::vector<GpuCacheSlots> sequenceCaches(int64_t sequence, std::string &error) const override;
  GpuStatus prefill(const GpuPrefillRequest &request, GpuPrefillResult &result,
                    std::string &error) override;

private:
  // "" when every token has a row of the embedding table, else the first that has none.
  std::string outsideVocabulary(const std::vector<int64_t> &tokens) const {
    for (int64_t token : tokens)
      if (token < 0 || token >= tableRows)
        return "token " + std::to_string(token) + " is outside the vocabulary of " +
               std::to_string(tableRows);
    return "";
  }
  bool check(CUresult result, const std::string &what, std::string &error) const {
    if (result == CUDA_SUCCESS)
      return true;
    error = what + ": " + cuda.describe(result);
    return false;
  }
  bool upload(DeviceMemory &memory, const void *data, size_t bytes, const char *what,
              std::string &error);
  // The WEIGHTS section, in pieces from the file's mapping.
  bool uploadWeights(const Artifact &artifact, std::string &error);
  GpuStatus checkKernel(const MkBlobHeader &header, std::string &error);
  GpuStatus checkVariants(const TaskGraph &graph, std::string &error);
  GpuStatus checkMemory(const Artifact &artifact, bool ownWeights, std::string &error);
  bool sharesOwnersWeights(const Artifact &artifact) const;
  bool readTimes(const GpuRunRequest &request, const MkControlBlock &block, GpuRunResult &result,
                 std::string &error);
  GpuStatus prepareTrace(int64_t steps, std::string &error);
  bool readTrace(int64_t done, std::vector<uint64_t> &times, std::string &error);
  bool readStepTimes(int64_t done, uint64_t startNs, std::vector<double> &stepMs,
                     std::string &error);
  bool startLaunch(const MkControlBlock &block, std::string &error);
  bool streamTokens(const GpuRunRequest &request, int64_t fed, int64_t &cancelledAt,
                    std::string &error);
  // The event counters and the activation arena: this device's own, or a
  // rank's in its NCCL window.
  CUdeviceptr countersAddress() const { return rank ? rank->counters : counters.get(); }
  CUdeviceptr activationsAddress() const {
    return rank ? rank->activations : activations.get();
  }
  // Waits for the launch: its stream's work, or the context's.
  bool finishLaunch(const char *what, std::string &error) {
    return check(launchStream ? cuda.cuStreamSynchronize(launchStream) : cuda.cuCtxSynchronize(),
                 what, error);
  }
  void releaseModel() {
    prompts.reset();
    if (launchStream)
      cuda.cuStreamDestroy(launchStream);
    launchStream = nullptr;
    if (startEvent)
      cuda.cuEventDestroy(startEvent);
    if (stopEvent)
      cuda.cuEventDestroy(stopEvent);
    if (module)
      cuda.cuModuleUnload(module);
    startEvent = stopEvent = nullptr;
    module = nullptr;
    kernel = oneTask = nullptr;
  }

  const CudaDriver &cuda;
  CUdevice device;
  CUcontext context;
  DeviceFacts facts;

  CUmodule module = nullptr;
  CUfunction kernel = nullptr, oneTask = nullptr; // mk_megakernel, mk_run_task
  CUevent startEvent = nullptr, stopEvent = nullptr;
  MkKernelInfo info{};
  MkBlobHeader header{};
  TaskGraph graph; // for messages about tasks
  int64_t contextLimit = 0;
  uint64_t vocab = 0;
  int64_t tableRows = 0;
  std::vector<int64_t> eosTokens;
  DeviceMemory blob, weights, activations, kv, counters, control, eos;
  // Shared weights (shareWeightsOf): the owner, and its weights' address
  // once a load took them instead of `weights`; `weightsSource`, the host
  // bytes the device's weights were loaded from, says which they are.
  const CudaGpuDevice *weightsOwner = nullptr;
  CUdeviceptr borrowedWeights = 0;
  const void *weightsSource = nullptr;
  DeviceMemory tokens, outputTokens, logits, timestamps, trace;
  DeviceMemory rowPlans; // MkRowPlan[rows], a kernel of several rows a step
  DeviceMemory contextTokens, penaltyMarks, penaltyLogits; // the repetition penalty's
  MappedHostMemory stream;                  // MkStream, then i64[steps]: streaming
  uint64_t launches = 0;                    // for the penalty's tags
  std::vector<MkOperationRecord> records;   // the blob's, one per operation of the graph
  std::unique_ptr<GpuPrefill> prompts;      // prompts layer by layer, where they can run so
  std::string whyNoPrompts;
  std::optional<GpuRankLink> rank; // set by loadRank: one rank of a tensor-parallel group
  CUstream launchStream = nullptr;  // a rank's; nullptr: the default stream
};

bool CudaGpuDevice::upload(DeviceMemory &memory, const void *data, size_t bytes, const char *what,
                           std::string &error) {
  error = memory.allocate(cuda, bytes, what);
  if (!error.empty())
    return false;
  return bytes == 0 ||
         check(cuda.cuMemcpyHtoD(memory.get(), data, bytes), std::string("copying ") + what, error);
}

bool CudaGpuDevice::uploadWeights(const Artifact &artifact, std::string &error) {
  auto bytes = std::span(reinterpret_cast<const uint8_t *>(artifact.weightData.data()),
                         artifact.weightData.size_bytes());
  error = weights.allocate(cuda, bytes.size(), "the weights");
  if (!error.empty())
    return false;
  // Piece by piece from the file's mapping, each piece's pages let go once
  // copied: a 16 GB model is never resident in host memory as a whole, and
  // a terminal shows how far the copy is.
  constexpr size_t kPiece = size_t{64} << 20;
  LoadProgress progress("the weights", bytes.size());
  for (size_t done = 0; done < bytes.size(); done += kPiece) {
    std::span<const uint8_t> piece = bytes.subspan(done, std::min(kPiece, bytes.size() - done));
    if (!check(cuda.cuMemcpyHtoD(weights.get() + done, piece.data(), piece.size()),
               "copying the weights", error))
      return false;
    if (artifact.releasePages)
      artifact.releasePages(piece);
    progress.advance(piece.size());
  }
  return true;
}

// The CUBIN matches the device and the blob, and its CTAs can all be
// resident at once.
GpuStatus CudaGpuDevice::checkKernel(const MkBlobHeader &header, std::string &error) {
  if (info.abiVersion != MK_KERNEL_ABI_VERSION) {
    error = "the kernel's launch ABI is version " + std::to_string(info.abiVersion) +
            "; this loader speaks version " + std::to_string(MK_KERNEL_ABI_VERSION);
    return GpuStatus::Unsupported;
  }
  if (info.ranks != header.ranks || (header.ranks > 1) != rank.has_value()) {
    error = "the kernel runs " + std::to_string(info.ranks) + " rank(s) and the blob " +
            std::to_string(header.ranks) + (rank ? "; this device runs one rank of several"
                                                 : "; this device runs one GPU's model");
    return GpuStatus::Unsupported;
  }
  if (info.numSms != header.numSms || info.numTasks != header.numTasks ||
      info.numEvents != header.numEvents || info.numOperations != header.numOperations ||
      info.maxContext != header.maxContext) {
    error = "the kernel was generated for another schedule (" + std::to_string(info.numTasks) +
            " tasks on " + std::to_string(info.numSms) + " SMs) than the blob's (" +
            std::to_string(header.numTasks) + " tasks on " + std::to_string(header.numSms) + ")";
    return GpuStatus::Unsupported;
  }
  if (header.numSms > static_cast<uint32_t>(facts.smCount)) {
    error = "the schedule runs " + std::to_string(header.numSms) + " CTAs, one per SM; " +
            describe() + " has " + std::to_string(facts.smCount) +
            ": compile for this GPU with --num-sms=" + std::to_string(facts.smCount);
    return GpuStatus::Unsupported;
  }
  if (!facts.cooperative) {
    error = describe() + " cannot launch cooperative kernels, which the persistent kernel needs";
    return GpuStatus::Unsupported;
  }
  if (!check(cuda.cuFuncSetAttribute(kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(info.sharedBytes)),
             "raising the kernel's shared memory to " + std::to_string(info.sharedBytes) +
                 " bytes",
             error))
    return GpuStatus::Unsupported;
  int residentCtas = 0;
  if (!check(cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(&residentCtas, kernel, info.threads,
                                                              info.sharedBytes),
             "querying the kernel's occupancy", error))
    return GpuStatus::Failed;
  if (residentCtas < 1) {
    error = "one CTA of the kernel (" + std::to_string(info.threads) + " threads, " +
            std::to_string(info.sharedBytes) + " bytes of dynamic shared memory) does not fit an SM of " +
            describe();
    return GpuStatus::Unsupported;
  }
  return GpuStatus::Ok;
}

// The model's arenas fit in the device's free memory, with room for a
// launch's buffers: checked before the first allocation, so a model too big
// for this GPU is refused with its numbers (and --device auto runs it on the
// CPU) rather than failing after gigabytes of copies.
GpuStatus CudaGpuDevice::checkMemory(const Artifact &artifact, bool ownWeights,
                                     std::string &error) {
  size_t freeBytes = 0, totalBytes = 0;
  if (!check(cuda.cuMemGetInfo(&freeBytes, &totalBytes), "asking for the free device memory",
             error))
    return GpuStatus::Failed;
  std::vector<MemoryNeed> needs = {
      {"the weights", ownWeights ? artifact.weightData.size_bytes() : 0},
      {"the KV arena for " + std::to_string(header.maxContext) + " positions",
       header.kvElements * sizeof(float)},
      {"the activations", header.activationElements * sizeof(float)},
      {"the schedule and sampling state",
       artifact.scheduleBlob.size() + header.numEvents * sizeof(uint32_t) +
           header.vocab * (sizeof(float) + sizeof(uint64_t)) + sizeof(MkControlBlock)}};
  error = checkMemoryFits(needs, freeBytes, totalBytes, kLaunchReserveBytes);
  if (error.empty())
    return GpuStatus::Ok;
  if (needs[1].bytes > needs[0].bytes)
    error += " (the KV arena follows the compiled context: compile with a smaller --max-context)";
  return GpuStatus::Unsupported;
}

// Whether the owner (shareWeightsOf) holds this artifact's weights: loaded
// from the same host bytes, of the same size, in this context. A view of
// the same file (rowStepArtifact) has the same weight bytes.
bool CudaGpuDevice::sharesOwnersWeights(const Artifact &artifact) const {
  return weightsOwner && weightsOwner != this && weightsOwner->context == context &&
         weightsOwner->weights.get() != 0 && weightsOwner->weightsSource != nullptr &&
         weightsOwner->weightsSource == artifact.weightData.data() &&
         weightsOwner->weights.bytes() == artifact.weightData.size_bytes();
}

// The kernel holds every variant the graph needs, under the numbers the
// blob gives the tasks: the kernel's published list (MkKernelVariant) is the
// graph's, entry for entry. Both come from the kinds' descriptions, so they
// differ only when the file's kernel was built for another graph.
GpuStatus CudaGpuDevice::checkVariants(const TaskGraph &graph, std::string &error) {
  KernelVariants needed = listKernelVariants(graph);
  CUdeviceptr address = 0;
  size_t bytes = 0;
  if (!check(cuda.cuModuleGetGlobal(&address, &bytes, module, MK_KERNEL_VARIANTS_NAME),
             "finding " MK_KERNEL_VARIANTS_NAME " in the CUBIN", error))
    return GpuStatus::Refused;
  std::vector<MkKernelVariant> held(info.numVariants);
  if (bytes != held.size() * sizeof(MkKernelVariant)) {
    error = MK_KERNEL_VARIANTS_NAME " has " + std::to_string(bytes) + " bytes for " +
            std::to_string(info.numVariants) + " variants";
    return GpuStatus::Refused;
  }
  if (bytes > 0 && !check(cuda.cuMemcpyDtoH(held.data(), address, bytes),
                          "reading " MK_KERNEL_VARIANTS_NAME, error))
    return GpuStatus::Failed;
  for (size_t i = 0; i < std::max(held.size(), needed.variants.size()); ++i) {
    std::string heldText = "none";
    bool same = false;
    if (i < held.size()) {
      const MkKernelVariant &entry = held[i];
      uint32_t count = std::min<uint32_t>(entry.numArguments, MK_MAX_VARIANT_ARGUMENTS);
      std::vector<int64_t> arguments(entry.arguments, entry.arguments + count);
      TaskKind kind = static_cast<TaskKind>(entry.kind);
      heldText = describeVariant(kind, arguments);
      same = i < needed.variants.size() && entry.kind < kNumTaskKinds &&
             kind == needed.variants[i].kind && arguments == needed.variants[i].arguments;
    }
    if (same)
      continue;
    std::string neededText =
        i < needed.variants.size()
            ? describeVariant(needed.variants[i].kind, needed.variants[i].arguments) + " (for " +
                  needed.variants[i].operations.front() + ")"
            : "none";
    error = "the kernel was generated for another graph: its variant " + std::to_string(i) +
            " is " + heldText + ", the schedule's is " + neededText;
    return GpuStatus::Refused;
  }
  return GpuStatus::Ok;
}

GpuStatus CudaGpuDevice::load(const Artifact &artifact, int64_t maxContext, std::string &error) {
  if (!check(cuda.cuCtxSetCurrent(context), "making the context current", error))
    return GpuStatus::Failed;
  releaseModel();
  borrowedWeights = 0;
  weightsSource = nullptr;
  if (artifact.cubin.empty()) {
    error = "the artifact has no kernel: it was compiled without NVRTC";
    return GpuStatus::Unsupported;
  }
  std::optional<ArchName> arch = parseArch(artifact.facts.targetArch);
  bool compatible = arch && arch->major == facts.major &&
                    (arch->specific ? arch->minor == facts.minor : arch->minor <= facts.minor);
  if (!compatible) {
    error = "device is " + deviceArch(facts) + "; the artifact's kernel is for " +
            artifact.facts.targetArch;
    return GpuStatus::Unsupported;
  }
  if (artifact.scheduleBlob.size() < sizeof(MkBlobHeader)) {
    error = "the schedule blob is shorter than its header";
    return GpuStatus::Unsupported;
  }
  std::memcpy(&header, artifact.scheduleBlob.data(), sizeof header);
  if (header.magic != MK_BLOB_MAGIC || header.version != MK_BLOB_VERSION ||
      header.totalBytes != artifact.scheduleBlob.size()) {
    error = "the schedule blob's header is not a version-" + std::to_string(MK_BLOB_VERSION) +
            " header of its " + std::to_string(artifact.scheduleBlob.size()) + " bytes";
    return GpuStatus::Unsupported;
  }
  if (maxContext <= 0 || maxContext > header.maxContext)
    maxContext = header.maxContext;

  if (!check(cuda.cuModuleLoadData(&module, artifact.cubin.data()), "loading the CUBIN", error) ||
      !check(cuda.cuModuleGetFunction(&kernel, module, MK_KERNEL_NAME),
             "finding " MK_KERNEL_NAME " in the CUBIN", error))
    return GpuStatus::Failed;
  CUdeviceptr infoAddress = 0;
  size_t infoBytes = 0;
  if (!check(cuda.cuModuleGetGlobal(&infoAddress, &infoBytes, module, MK_KERNEL_INFO_NAME),
             "finding " MK_KERNEL_INFO_NAME " in the CUBIN", error))
    return GpuStatus::Failed;
  if (infoBytes != sizeof info) {
    error = MK_KERNEL_INFO_NAME " has " + std::to_string(infoBytes) + " bytes, not " +
            std::to_string(sizeof info);
    return GpuStatus::Unsupported;
  }
  if (!check(cuda.cuMemcpyDtoH(&info, infoAddress, sizeof info), "reading " MK_KERNEL_INFO_NAME,
             error))
    return GpuStatus::Failed;
  if (GpuStatus fits = checkKernel(header, error); fits != GpuStatus::Ok)
    return fits;
  if (GpuStatus variants = checkVariants(artifact.graph, error); variants != GpuStatus::Ok)
    return variants;
  if (!check(cuda.cuModuleGetFunction(&oneTask, module, MK_ONE_TASK_KERNEL_NAME),
             "finding " MK_ONE_TASK_KERNEL_NAME " in the CUBIN", error) ||
      !check(cuda.cuFuncSetAttribute(oneTask, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(info.sharedBytes)),
             "raising " MK_ONE_TASK_KERNEL_NAME "'s shared memory", error))
    return GpuStatus::Failed;

  // The KV arena keeps the compiled layout ([kv][maxContext][D] per cache,
  // caches back to back), so it is allocated whole; maxContext only bounds
  // the positions a run may reach. Every arena starts zeroed: a run from a
  // start position (GpuRunRequest::firstPosition) attends to the slots
  // below it, which must be finite and the same in every session.
  const bool shared = !rank && sharesOwnersWeights(artifact);
  if (GpuStatus fits = checkMemory(artifact, !shared, error); fits != GpuStatus::Ok)
    return fits;
  if (!upload(blob, artifact.scheduleBlob.data(), artifact.scheduleBlob.size(), "the schedule blob",
              error))
    return GpuStatus::Failed;
  if (shared) {
    weights = DeviceMemory();
    borrowedWeights = weightsOwner->weights.get();
  } else if (!uploadWeights(artifact, error)) {
    return GpuStatus::Failed;
  }
  weightsSource = artifact.weightData.data();
  // A rank's activations and counters are in its NCCL window, which the
  // group allocated and cleared.
  size_t ownActivations = rank ? 0 : header.activationElements * sizeof(float);
  size_t ownCounters = rank ? 0 : header.numEvents * sizeof(uint32_t);
  for (auto [memory, bytes, what] :
       {std::tuple{&activations, ownActivations, "the activation arena"},
        std::tuple{&kv, header.kvElements * sizeof(float), "the KV arena"},
        std::tuple{&counters, ownCounters, "the event counters"},
        std::tuple{&control, sizeof(MkControlBlock), "the control block"}}) {
    error = memory->allocate(cuda, bytes, what);
    if (!error.empty() ||
        !check(cuda.cuMemsetD8(memory->get(), 0, std::max<size_t>(bytes, 1)),
               std::string("clearing ") + what, error))
      return GpuStatus::Failed;
  }
  error = penaltyLogits.allocate(cuda, header.vocab * sizeof(float), "the penalized logits");
  if (!error.empty())
    return GpuStatus::Failed;
  error = penaltyMarks.allocate(cuda, header.vocab * sizeof(uint64_t), "the penalty marks");
  if (!error.empty() || !check(cuda.cuMemsetD8(penaltyMarks.get(), 0, penaltyMarks.bytes()),
                               "clearing the penalty marks", error))
    return GpuStatus::Failed;
  eosTokens = artifact.facts.eosTokens;
  if (!upload(eos, eosTokens.data(), eosTokens.size() * sizeof(int64_t), "the EOS tokens", error))
    return GpuStatus::Failed;
  if (!check(cuda.cuEventCreate(&startEvent, CU_EVENT_DEFAULT), "creating an event", error) ||
      !check(cuda.cuEventCreate(&stopEvent, CU_EVENT_DEFAULT), "creating an event", error))
    return GpuStatus::Failed;

  graph = artifact.graph;
  contextLimit = maxContext;
  vocab = header.vocab;
  tableRows = artifact.facts.vocab;
  // Prompts layer by layer where this machine and file allow; else they
  // run one token a step, as before.
  records.assign(header.numOperations, MkOperationRecord{});
  if (header.operationsOffset + records.size() * sizeof(MkOperationRecord) <=
      artifact.scheduleBlob.size())
    std::memcpy(records.data(), artifact.scheduleBlob.data() + header.operationsOffset,
                records.size() * sizeof(MkOperationRecord));
  PrefillModel model{module, weightsAddress(), blob.get() + header.paramsOffset, kv.get(),
                     static_cast<uint64_t>(tableRows)};
  whyNoPrompts.clear();
  if (rank)
    whyNoPrompts = "a rank of tensor parallelism";
  else if (header.rows == 1)
    prompts = GpuPrefill::create(cuda, model, graph, records, whyNoPrompts);
  else
    whyNoPrompts = "a kernel of several rows a step";
  // The prompt kernels warmed up here, not in the first prompt's time (a
  // device short of memory for them runs prompts by step); the KV arena
  // zeroed again after them, as a new session's.
  if (prompts && !prompts->warmUp(contextLimit, whyNoPrompts)) {
    prompts.reset();
    whyNoPrompts = "warming the prompt kernels up: " + whyNoPrompts;
  }
  if (!check(cuda.cuMemsetD8(kv.get(), 0, kv.bytes()), "clearing the KV arena", error))
    return GpuStatus::Failed;
  return GpuStatus::Ok;
}

GpuStatus CudaGpuDevice::prefill(const GpuPrefillRequest &request, GpuPrefillResult &result,
                                 std::string &error) {
  if (!prompts) {
    error = "prompts do not run layer by layer here: " + prefillUnavailable();
    return GpuStatus::Refused;
  }
  if (!check(cuda.cuCtxSetCurrent(context), "making the context current", error))
    return GpuStatus::Failed;
  const int64_t count = static_cast<int64_t>(request.tokens.size());
  if (count == 0) {
    error = "the prompt has no tokens";
    return GpuStatus::Refused;
  }
  if (error = outsideVocabulary(request.tokens); !error.empty())
    return GpuStatus::Refused;
  if (request.firstPosition < 0 || request.firstPosition > contextLimit ||
      count > contextLimit - request.firstPosition) {
    error = "the prompt needs " + std::to_string(count) + " positions from position " +
            std::to_string(request.firstPosition) + "; the context holds " +
            std::to_string(contextLimit);
    return GpuStatus::Refused;
  }
  if (request.firstToken && (request.keepLogits || !prompts->picksFirstToken())) {
    error = request.keepLogits ? "a prompt's first token is picked without its logits kept"
                               : "this model's prompts do not pick their first token";
    return GpuStatus::Refused;
  }
  if (!request.caches.empty() && (request.keepLogits || request.firstToken)) {
    error = "a prompt into another model's caches keeps no logits and picks no token";
    return GpuStatus::Refused;
  }
  if (error = prompts->checkCaches(request.caches, request.firstPosition + count);
      !error.empty())
    return GpuStatus::Refused;
  if (!check(cuda.cuEventRecord(startEvent, nullptr), "timing the prompt", error) ||
      !prompts->run(request.tokens, request.firstPosition,
                    request.keepLogits ? &result.logits : nullptr, request.maxRows, error,
                    request.caches) ||
      (request.firstToken && !prompts->firstToken(result.firstToken, error)) ||
      !check(cuda.cuEventRecord(stopEvent, nullptr), "timing the prompt", error) ||
      !check(cuda.cuEventSynchronize(stopEvent), "timing the prompt", error))
    return GpuStatus::Failed;
  prompts->printProfile(count);
  float milliseconds = 0;
  if (!check(cuda.cuEventElapsedTime(&milliseconds, startEvent, stopEvent), "timing the prompt",
             error))
    return GpuStatus::Failed;
  result.milliseconds = milliseconds;
  result.rowsPerPass = prompts->rowsPerPass();
  return GpuStatus::Ok;
}

std::vector<GpuCacheSlots> CudaGpuDevice::sequenceCaches(int64_t sequence,
                                                         std::string &error) const {
  if (!kernel) {
    error = "no model is loaded";
    return {};
  }
  if (records.size() != graph.operations.size()) {
    error = "the blob's operations are not the graph's";
    return {};
  }
  if (sequence < 0 || sequence >= graph.sequences) {
    error = "sequence " + std::to_string(sequence) + " of a model whose caches hold " +
            std::to_string(graph.sequences);
    return {};
  }
  std::vector<GpuCacheSlots> caches;
  for (size_t index = 0; index < graph.operations.size(); ++index) {
    const Operation &op = graph.operations[index];
    if (op.kind != OpKind::Attention)
      continue;
    const Buffer &keys = graph.buffers[op.keyCache];
    GpuCacheSlots slots{0, 0, graph.maxContext, op.numKvHeads, op.headDim,
                        bytesPerElement(keys.element)};
    // A cache is [sequences][kvHeads][maxContext][headDim] (TaskGraph.h).
    const uint64_t perSequence = static_cast<uint64_t>(graph.maxContext * op.numKvHeads * op.headDim);
    if (keys.elements != perSequence * static_cast<uint64_t>(graph.sequences)) {
      error = "cache '" + keys.name + "' holds " + std::to_string(keys.elements) +
              " elements, not " + std::to_string(graph.sequences) + " sequences of " +
              std::to_string(perSequence);
      return {};
    }
    const uint64_t offset = static_cast<uint64_t>(sequence) * perSequence * slots.elementBytes;
    slots.keys = kv.get() + records[index].keyCache * 4 + offset;
    slots.values = kv.get() + records[index].valueCache * 4 + offset;
    caches.push_back(slots);
  }
  return caches;
}

GpuStatus CudaGpuDevice::run(const GpuRunRequest &request, GpuRunResult &result, std::string &error) {
  if (!kernel) {
    error = "no model is loaded";
    return GpuStatus::Refused;
  }
  if (!check(cuda.cuCtxSetCurrent(context), "making the context current", error))
    return GpuStatus::Failed;
  int64_t fed = static_cast<int64_t>(request.tokens.size());
  if (fed == 0) {
    error = "the request has no tokens";
    return GpuStatus::Refused;
  }
  if (error = outsideVocabulary(request.tokens); !error.empty())
    return GpuStatus::Refused;
  // As CpuExecutor::generate: the last prompt step yields the first new
  // token, and the last new token is returned, not fed.
  int64_t steps = request.teacherForced ? fed : fed + std::max<int64_t>(request.newTokens, 1) - 1;
  int64_t limit = request.maxContext > 0 ? std::min(request.maxContext, contextLimit) : contextLimit;
  if (request.firstPosition < 0 || request.firstPosition > limit ||
      steps > limit - request.firstPosition) {
    error = "the run needs " + std::to_string(steps) + " positions from position " +
            std::to_string(request.firstPosition) + "; the context holds " + std::to_string(limit);
    return GpuStatus::Refused;
  }

  if (!upload(tokens, request.tokens.data(), fed * sizeof(int64_t), "the tokens", error))
    return GpuStatus::Failed;
  error = outputTokens.allocate(cuda, steps * sizeof(int64_t), "the output tokens");
  if (!error.empty())
    return GpuStatus::Failed;
  if (request.keepLogits) {
    error = logits.allocate(cuda, steps * vocab * sizeof(float), "the logits");
    if (!error.empty())
      return GpuStatus::Failed;
  }
  error = timestamps.allocate(cuda, steps * sizeof(uint64_t), "the step timestamps");
  if (!error.empty())
    return GpuStatus::Failed;
  if (request.keepTrace)
    if (GpuStatus status = prepareTrace(steps, error); status != GpuStatus::Ok)
      return status;

  // The context's tokens by position, for the repetition penalty: what the
  // request knows below its first position, then the prompt; the kernel
  // writes the rest.
  std::vector<int64_t> context(request.firstPosition + steps + 1, -1);
  std::copy_n(request.contextTokens.begin(),
              std::min<size_t>(request.contextTokens.size(), request.firstPosition),
              context.begin());
  std::copy(request.tokens.begin(), request.tokens.end(), context.begin() + request.firstPosition);
  if (!upload(contextTokens, context.data(), context.size() * sizeof(int64_t),
              "the context's tokens", error))
    return GpuStatus::Failed;
  bool streaming = static_cast<bool>(request.onToken) && !request.teacherForced;
  if (streaming) {
    error = stream.allocate(cuda, sizeof(MkStream) + steps * sizeof(int64_t), "streaming");
    if (!error.empty())
      return GpuStatus::Failed;
  }

  MkControlBlock block{};
  block.steps = steps;
  block.firstPosition = request.firstPosition;
  block.forcedSteps = fed;
  block.sampling = request.teacherForced ? mk_sampling_greedy() : request.sampling;
  block.contextTokens = contextTokens.get();
  block.penaltyMarks = penaltyMarks.get();
  block.penaltyLogits = penaltyLogits.get();
  block.penaltyTag = ++launches << 32;
  block.stream = streaming ? stream.deviceAddress() : 0;
  block.streamTokens = streaming ? stream.deviceAddress() + sizeof(MkStream) : 0;
  block.eosFromStep = request.teacherForced ? std::numeric_limits<int64_t>::max() : fed - 1;
  block.tokens = tokens.get();
  block.outputTokens = outputTokens.get();
  block.logits = request.keepLogits ? logits.get() : 0;
  block.timestamps = timestamps.get();
  block.trace = request.keepTrace ? trace.get() : 0;
  block.eosTokens = eos.get();
  block.numEos = static_cast<uint32_t>(eosTokens.size());
  block.waitTimeoutNs = kWaitTimeoutNs;
  if (!startLaunch(block, error))
    return GpuStatus::Failed;
  int64_t cancelledAt = -1; // the step whose token the host stopped after
  if (streaming && !streamTokens(request, fed, cancelledAt, error))
    return GpuStatus::Failed;
  if (!finishLaunch("running the megakernel", error))
    return GpuStatus::Failed;
  float milliseconds = 0;
  if (!check(cuda.cuEventElapsedTime(&milliseconds, startEvent, stopEvent), "timing the launch",
             error) ||
      !check(cuda.cuMemcpyDtoH(&block, control.get(), sizeof block), "reading the control block",
             error))
    return GpuStatus::Failed;
  std::string deviceError = describeDeviceError(block, graph);
  if (!deviceError.empty()) {
    error = "the megakernel stopped: " + deviceError;
    return GpuStatus::Failed;
  }

  // The kernel may have run a step or two past the host's stop before it
  // read the cancel: those are dropped, as the CPU never runs them.
  bool cancelled = cancelledAt >= 0;
  int64_t done = cancelled ? std::min<int64_t>(block.stepsDone, cancelledAt + 1) : block.stepsDone;
  std::vector<int64_t> argmax(done);
  if (done > 0 && !check(cuda.cuMemcpyDtoH(argmax.data(), outputTokens.get(), done * sizeof(int64_t)),
                         "reading the tokens", error))
    return GpuStatus::Failed;
  result = GpuRunResult{};
  result.steps = done;
  result.kernelMilliseconds = milliseconds;
  result.stopReason = cancelled ? "host" : block.stop ? "eos" : "limit";
  // Teacher forcing returns every step's argmax; generation the new tokens.
  int64_t first = request.teacherForced ? 0 : fed - 1;
  int64_t count = request.teacherForced ? done : std::min(request.newTokens, done - first);
  if (count > 0)
    result.generated.assign(argmax.begin() + first, argmax.begin() + first + count);
  if (request.keepLogits && done > 0) {
    result.logits.resize(done * vocab);
    if (!check(cuda.cuMemcpyDtoH(result.logits.data(), logits.get(),
                                 result.logits.size() * sizeof(float)),
               "reading the logits", error))
      return GpuStatus::Failed;
  }
  return readTimes(request, block, result, error) ? GpuStatus::Ok : GpuStatus::Failed;
}

GpuStatus CudaGpuDevice::runTask(uint32_t task, int64_t position, int64_t token,
                                 std::vector<float> &activationValues,
                                 std::vector<float> &kvValues, std::string &error,
                                 const MkSamplingSettings &sampling,
                                 const std::vector<int64_t> &contextOfTask) {
  if (!oneTask) {
    error = "no model is loaded";
    return GpuStatus::Refused;
  }
  if (task >= header.numTasks || position < 0 || position >= contextLimit ||
      activationValues.size() != header.activationElements ||
      kvValues.size() != header.kvElements) {
    error = "task " + std::to_string(task) + " at position " + std::to_string(position) +
            " on arenas of " + std::to_string(activationValues.size()) + " and " +
            std::to_string(kvValues.size()) + " floats is not a run of this model";
    return GpuStatus::Refused;
  }
  if (!check(cuda.cuCtxSetCurrent(context), "making the context current", error))
    return GpuStatus::Failed;
  if (!upload(tokens, &token, sizeof token, "the token", error))
    return GpuStatus::Failed;
  error = outputTokens.allocate(cuda, sizeof(int64_t), "the output token");
  if (!error.empty())
    return GpuStatus::Failed;
  std::vector<int64_t> tokensByPosition(position + 2, -1);
  std::copy_n(contextOfTask.begin(), std::min<size_t>(contextOfTask.size(), position + 1),
              tokensByPosition.begin());
  if (!upload(contextTokens, tokensByPosition.data(), tokensByPosition.size() * sizeof(int64_t),
              "the context's tokens", error))
    return GpuStatus::Failed;
  MkControlBlock block{};
  block.ranks = rank ? rank->ranks : 0; // a rank's AllReduce reads the other ranks
  block.sampling = sampling;
  block.contextTokens = contextTokens.get();
  block.penaltyMarks = penaltyMarks.get();
  block.penaltyLogits = penaltyLogits.get();
  block.penaltyTag = ++launches << 32;
  block.steps = 1;
  block.firstPosition = position;
  block.forcedSteps = 1;
  block.eosFromStep = std::numeric_limits<int64_t>::max();
  block.tokens = tokens.get();
  block.outputTokens = outputTokens.get();
  block.eosTokens = eos.get();
  block.waitTimeoutNs = kWaitTimeoutNs;
  if (info.rows > 1) {
    // A kernel of several rows: every row at `position` with `token`, each
    // its own sequence.
    std::vector<MkRowPlan> plans(info.rows);
    for (uint32_t r = 0; r < info.rows; ++r)
      plans[r] = MkRowPlan{r, position, 1, 1, tokens.get(),
                           std::numeric_limits<int64_t>::max(), 1, 0};
    if (!upload(rowPlans, plans.data(), plans.size() * sizeof(MkRowPlan), "the row plans", error))
      return GpuStatus::Failed;
    block.rowPlans = rowPlans.get();
  }
  if (!check(cuda.cuMemcpyHtoD(control.get(), &block, sizeof block), "writing the control block",
             error) ||
      !check(cuda.cuMemcpyHtoD(activationsAddress(), activationValues.data(),
                               activationValues.size() * sizeof(float)),
             "copying the activation arena", error) ||
      !check(cuda.cuMemcpyHtoD(kv.get(), kvValues.data(), kvValues.size() * sizeof(float)),
             "copying the KV arena", error))
    return GpuStatus::Failed;
  MkKernelArgs args{blob.get(), activationsAddress(), kv.get(), weightsAddress(), countersAddress(),
                    control.get()};
  long long at = position;
  void *parameters[] = {&args, &task, &at};
  if (!check(cuda.cuLaunchCooperativeKernel(oneTask, 1, 1, 1, info.threads, 1, 1, info.sharedBytes,
                                            nullptr, parameters),
             "launching " MK_ONE_TASK_KERNEL_NAME, error) ||
      !check(cuda.cuCtxSynchronize(), "running " MK_ONE_TASK_KERNEL_NAME, error) ||
      !check(cuda.cuMemcpyDtoH(&block, control.get(), sizeof block), "reading the control block",
             error) ||
      !check(cuda.cuMemcpyDtoH(activationValues.data(), activationsAddress(),
                               activationValues.size() * sizeof(float)),
             "reading the activation arena", error) ||
      !check(cuda.cuMemcpyDtoH(kvValues.data(), kv.get(), kvValues.size() * sizeof(float)),
             "reading the KV arena", error))
    return GpuStatus::Failed;
  std::string deviceError = describeDeviceError(block, graph);
  if (!deviceError.empty()) {
    error = "the task stopped: " + deviceError;
    return GpuStatus::Failed;
  }
  return GpuStatus::Ok;
}

GpuStatus CudaGpuDevice::runBatch(const GpuBatchRequest &request, GpuBatchResult &result,
                                  std::string &error) {
  const int64_t rows = info.rows;
  if (!kernel || rows < 2) {
    error = "no batch kernel is loaded";
    return GpuStatus::Refused;
  }
  if (!check(cuda.cuCtxSetCurrent(context), "making the context current", error))
    return GpuStatus::Failed;
  const int64_t sequences = static_cast<int64_t>(request.prompts.size());
  if (sequences < 1 || sequences > rows) {
    error = std::to_string(sequences) + " sequences for a batch of " + std::to_string(rows);
    return GpuStatus::Refused;
  }
  // As CpuExecutor::generateBatch: a sequence's last prompt step yields its
  // first new token; the launch runs as long as its longest sequence.
  if (!request.firstPositions.empty() &&
      request.firstPositions.size() != request.prompts.size()) {
    error = std::to_string(request.firstPositions.size()) + " first positions for " +
            std::to_string(sequences) + " sequences";
    return GpuStatus::Refused;
  }
  auto firstPosition = [&](int64_t sequence) {
    return request.firstPositions.empty() ? request.firstPosition
                                          : request.firstPositions[sequence];
  };
  int64_t steps = 0;
  for (int64_t r = 0; r < sequences; ++r) {
    const std::vector<int64_t> &prompt = request.prompts[r];
    if (prompt.empty()) {
      error = "a sequence of the batch has no tokens";
      return GpuStatus::Refused;
    }
    if (error = outsideVocabulary(prompt); !error.empty())
      return GpuStatus::Refused;
    int64_t fed = static_cast<int64_t>(prompt.size());
    int64_t needed =
        request.teacherForced ? fed : fed + std::max<int64_t>(request.newTokens, 1) - 1;
    steps = std::max(steps, needed);
    if (firstPosition(r) < 0 || firstPosition(r) > contextLimit ||
        needed > contextLimit - firstPosition(r)) {
      error = "sequence " + std::to_string(r) + " of the batch needs " + std::to_string(needed) +
              " positions from position " + std::to_string(firstPosition(r)) +
              "; the context holds " + std::to_string(contextLimit);
      return GpuStatus::Refused;
    }
  }

  // The prompts back to back, and a plan per row (idle past the sequences).
  std::vector<int64_t> fedTokens;
  std::vector<MkRowPlan> plans(rows);
  for (int64_t r = 0; r < rows; ++r) {
    MkRowPlan &plan = plans[r];
    plan.sequence = r;
    plan.firstPosition = r < sequences ? firstPosition(r) : request.firstPosition;
    plan.positionsPerStep = 1;
    if (r >= sequences)
      continue; // activeUntil 0: idle from the start
    const std::vector<int64_t> &prompt = request.prompts[r];
    int64_t fed = static_cast<int64_t>(prompt.size());
    plan.forcedSteps = fed;
    plan.tokens = fedTokens.size() * sizeof(int64_t); // an offset until the upload
    fedTokens.insert(fedTokens.end(), prompt.begin(), prompt.end());
    plan.eosFromStep = request.teacherForced ? std::numeric_limits<int64_t>::max() : fed - 1;
    plan.activeUntil =
        request.teacherForced ? fed : fed + std::max<int64_t>(request.newTokens, 1) - 1;
  }
  if (!upload(tokens, fedTokens.data(), fedTokens.size() * sizeof(int64_t), "the tokens", error))
    return GpuStatus::Failed;
  for (int64_t r = 0; r < sequences; ++r)
    plans[r].tokens += tokens.get();
  // With a repetition penalty, each sequence's tokens by position (a slot
  // past the context's last, for the pick at it): what the request knows
  // below its first position, then its prompt; the kernel writes its picks.
  const bool penalty = !request.teacherForced && mk_sampling_has_penalty(&request.sampling);
  if (penalty) {
    const size_t stride = static_cast<size_t>(contextLimit) + 1;
    std::vector<int64_t> byPosition(stride * sequences, -1);
    for (int64_t r = 0; r < sequences; ++r) {
      int64_t *row = byPosition.data() + r * stride;
      if (r < static_cast<int64_t>(request.contextTokens.size())) {
        const std::vector<int64_t> &known = request.contextTokens[r];
        std::copy_n(known.begin(), std::min<size_t>(known.size(), firstPosition(r)), row);
      }
      std::copy(request.prompts[r].begin(), request.prompts[r].end(), row + firstPosition(r));
    }
    if (!upload(contextTokens, byPosition.data(), byPosition.size() * sizeof(int64_t),
                "the sequences' tokens", error))
      return GpuStatus::Failed;
    for (int64_t r = 0; r < sequences; ++r)
      plans[r].contextTokens = contextTokens.get() + r * stride * sizeof(int64_t);
  }
  if (!upload(rowPlans, plans.data(), plans.size() * sizeof(MkRowPlan), "the row plans", error))
    return GpuStatus::Failed;
  error = outputTokens.allocate(cuda, steps * rows * sizeof(int64_t), "the output tokens");
  if (error.empty() && request.keepLogits)
    error = logits.allocate(cuda, steps * rows * vocab * sizeof(float), "the logits");
  if (error.empty())
    error = timestamps.allocate(cuda, steps * sizeof(uint64_t), "the step timestamps");
  if (!error.empty())
    return GpuStatus::Failed;
  // The kernel writes the logits of the rows that run a step; an idle row's
  // are zeros (a new allocation holds whatever memory it was given, which
  // differs from launch to launch).
  if (request.keepLogits &&
      !check(cuda.cuMemsetD8(logits.get(), 0, logits.bytes()), "clearing the logits", error))
    return GpuStatus::Failed;
  if (request.keepTrace)
    if (GpuStatus status = prepareTrace(steps, error); status != GpuStatus::Ok)
      return status;

  MkControlBlock block{};
  block.steps = steps;
  block.firstPosition = request.firstPosition; // the rows' own are in their plans
  block.eosFromStep = std::numeric_limits<int64_t>::max(); // the rows' own
  block.outputTokens = outputTokens.get();
  block.logits = request.keepLogits ? logits.get() : 0;
  block.timestamps = timestamps.get();
  block.eosTokens = eos.get();
  block.numEos = static_cast<uint32_t>(eosTokens.size());
  block.waitTimeoutNs = kWaitTimeoutNs;
  block.rowPlans = rowPlans.get();
  block.sampling = request.teacherForced ? mk_sampling_greedy() : request.sampling;
  if (penalty) {
    block.penaltyMarks = penaltyMarks.get();
    block.penaltyLogits = penaltyLogits.get();
    block.penaltyTag = ++launches << 32; // a step's rows' tags: + step * rows + row + 1
  }
  block.trace = request.keepTrace ? trace.get() : 0;
  if (!startLaunch(block, error) ||
      !finishLaunch("running the megakernel", error))
    return GpuStatus::Failed;
  float milliseconds = 0;
  if (!check(cuda.cuEventElapsedTime(&milliseconds, startEvent, stopEvent), "timing the launch",
             error) ||
      !check(cuda.cuMemcpyDtoH(&block, control.get(), sizeof block), "reading the control block",
             error) ||
      !check(cuda.cuMemcpyDtoH(plans.data(), rowPlans.get(), plans.size() * sizeof(MkRowPlan)),
             "reading the row plans", error))
    return GpuStatus::Failed;
  std::string deviceError = describeDeviceError(block, graph);
  if (!deviceError.empty()) {
    error = "the megakernel stopped: " + deviceError;
    return GpuStatus::Failed;
  }

  int64_t done = block.stepsDone;
  std::vector<int64_t> picked(done * rows);
  if (done > 0 && !check(cuda.cuMemcpyDtoH(picked.data(), outputTokens.get(),
                                           picked.size() * sizeof(int64_t)),
                         "reading the tokens", error))
    return GpuStatus::Failed;
  result = GpuBatchResult{};
  result.steps = done;
  result.rows = rows;
  result.kernelMilliseconds = milliseconds;
  result.generated.resize(sequences);
  result.atEos.resize(sequences);
  for (int64_t r = 0; r < sequences; ++r) {
    int64_t fed = static_cast<int64_t>(request.prompts[r].size());
    int64_t first = request.teacherForced ? 0 : fed - 1;
    int64_t until = std::min(plans[r].activeUntil, done);
    for (int64_t step = first; step < until; ++step)
      result.generated[r].push_back(picked[step * rows + r]);
    if (!request.teacherForced && result.generated[r].size() > uint64_t(request.newTokens))
      result.generated[r].resize(request.newTokens);
    result.atEos[r] = !request.teacherForced && !result.generated[r].empty() &&
                      std::find(eosTokens.begin(), eosTokens.end(),
                                result.generated[r].back()) != eosTokens.end();
  }
  if (request.keepLogits && done > 0) {
    result.logits.resize(done * rows * vocab);
    if (!check(cuda.cuMemcpyDtoH(result.logits.data(), logits.get(),
                                 result.logits.size() * sizeof(float)),
               "reading the logits", error))
      return GpuStatus::Failed;
  }
  result.startNs = block.startNs;
  return readStepTimes(done, block.startNs, result.stepMilliseconds, error) &&
                 (!request.keepTrace || readTrace(done, result.trace, error))
             ? GpuStatus::Ok
             : GpuStatus::Failed;
}

// While the kernel runs: polls the stream's count and hands each new
// generated token to request.onToken, in order; on its word, writes the
// cancel flag the kernel reads each step. Returns once the kernel has ended
// (the stop event passed) and every published token was delivered; false
// when the driver failed. The count is read with acquire semantics after
// the kernel's system-scope release, so the token below it is there.
bool CudaGpuDevice::streamTokens(const GpuRunRequest &request, int64_t fed, int64_t &cancelledAt,
                                 std::string &error) {
  error.clear();
  bool cancelled = false;
  unsigned char *base = static_cast<unsigned char *>(stream.hostAddress());
  MkStream *shared = reinterpret_cast<MkStream *>(base);
  const volatile int64_t *tokens = reinterpret_cast<const volatile int64_t *>(base + sizeof(MkStream));
  std::atomic_ref<int64_t> count(shared->published);
  int64_t delivered = 0, firstGenerated = fed - 1;
  bool ended = false;
  while (true) {
    int64_t ready = count.load(std::memory_order_acquire);
    for (; delivered < ready; ++delivered) {
      int64_t index = delivered - firstGenerated;
      if (index < 0 || index >= request.newTokens || cancelled)
        continue;
      bool stop = true;
      try {
        stop = request.onToken(index, tokens[delivered]);
      } catch (const std::exception &failure) {
        // The kernel is running: stop it, let it end, then report.
        if (error.empty())
          error = std::string("the token callback failed: ") + failure.what();
      }
      if (stop) {
        cancelled = true;
        cancelledAt = delivered;
        std::atomic_ref<uint32_t>(shared->cancel).store(1, std::memory_order_release);
      }
    }
    if (ended)
      return error.empty();
    CUresult state = cuda.cuEventQuery(stopEvent);
    if (state == CUDA_SUCCESS)
      ended = true; // one more pass: what the kernel published last
    else if (state != CUDA_ERROR_NOT_READY)
      return check(state, "running the megakernel", error) && error.empty();
    else
      std::this_thread::yield();
  }
}

// The control block written, the event counters zeroed, the persistent
// kernel launched between the start and stop events; it runs on while the
// caller waits or streams.
bool CudaGpuDevice::startLaunch(const MkControlBlock &block, std::string &error) {
  MkControlBlock launched = block;
  launched.ranks = rank ? rank->ranks : 0;
  if (!check(cuda.cuMemcpyHtoD(control.get(), &launched, sizeof launched),
             "writing the control block", error) ||
      !check(cuda.cuMemsetD8(countersAddress(), 0, header.numEvents * sizeof(uint32_t)),
             "clearing the event counters", error))
    return false;
  // A rank's kernel reads the other ranks' counters from its start: every
  // rank clears its own before any launches.
  if (rank) {
    if (!check(cuda.cuCtxSynchronize(), "clearing the event counters", error))
      return false;
    if (!rank->beforeLaunch()) {
      error = "another rank failed before the launch";
      return false;
    }
  }
  MkKernelArgs args{blob.get(), activationsAddress(), kv.get(), weightsAddress(), countersAddress(),
                    control.get()};
  void *parameters[] = {&args};
  return check(cuda.cuEventRecord(startEvent, launchStream), "recording an event", error) &&
         check(cuda.cuLaunchCooperativeKernel(kernel, header.numSms, 1, 1, info.threads, 1, 1,
                                              info.sharedBytes, launchStream, parameters),
               "launching the megakernel", error) &&
         check(cuda.cuEventRecord(stopEvent, launchStream), "recording an event", error);
}

// Each of the `done` steps' time, from the previous step's argmax (step 0:
// the launch's start) to its own, by the kernel's %globaltimer.
bool CudaGpuDevice::readStepTimes(int64_t done, uint64_t startNs, std::vector<double> &stepMs,
                                  std::string &error) {
  std::vector<uint64_t> ends(done);
  if (done > 0 && !check(cuda.cuMemcpyDtoH(ends.data(), timestamps.get(), done * sizeof(uint64_t)),
                         "reading the step timestamps", error))
    return false;
  for (int64_t step = 0; step < done; ++step) {
    uint64_t begin = step > 0 ? ends[step - 1] : startNs;
    // Signed: a clock that stepped back shows as such, not as 584 years.
    stepMs.push_back(static_cast<double>(int64_t(ends[step] - begin)) * 1e-6);
  }
  return true;
}

// The step times and, when asked, the trace of the `result.steps` steps the
// launch completed.
bool CudaGpuDevice::readTimes(const GpuRunRequest &request, const MkControlBlock &block,
                              GpuRunResult &result, std::string &error) {
  int64_t done = result.steps;
  result.startNs = block.startNs;
  return readStepTimes(done, block.startNs, result.stepMilliseconds, error) &&
         (!request.keepTrace || readTrace(done, result.trace, error));
}

// The trace buffer for a launch of `steps` steps, cleared (a task the launch
// never reaches keeps 0s): Ok, Refused when it would be too big, or Failed.
GpuStatus CudaGpuDevice::prepareTrace(int64_t steps, std::string &error) {
  uint64_t traceBytes = uint64_t(steps) * header.numTasks * MK_TRACE_TIMES * sizeof(uint64_t);
  if (traceBytes > kMaxTraceBytes) {
    error = "a trace of " + std::to_string(steps) + " steps of " +
            std::to_string(header.numTasks) + " tasks needs " + std::to_string(traceBytes) +
            " bytes, more than the " + std::to_string(kMaxTraceBytes) +
            " allowed: trace fewer steps";
    return GpuStatus::Refused;
  }
  error = trace.allocate(cuda, traceBytes, "the trace");
  if (!error.empty() ||
      !check(cuda.cuMemsetD8(trace.get(), 0, traceBytes), "clearing the trace", error))
    return GpuStatus::Failed;
  return GpuStatus::Ok;
}

// The trace of the `done` steps the launch completed.
bool CudaGpuDevice::readTrace(int64_t done, std::vector<uint64_t> &times, std::string &error) {
  times.resize(uint64_t(done) * header.numTasks * MK_TRACE_TIMES);
  return times.empty() || check(cuda.cuMemcpyDtoH(times.data(), trace.get(),
                                                  times.size() * sizeof(uint64_t)),
                                "reading the trace", error);
}

// Facts of device 0, or why it cannot run the kernel.
std::optional<DeviceFacts> readFacts(const CudaDriver &cuda, CUdevice device, std::string &whyNot) {
  DeviceFacts facts;
  char name[256] = {};
  auto attribute = [&](CUdevice_attribute which, int &value) {
    return cuda.cuDeviceGetAttribute(&value, which, device) == CUDA_SUCCESS;
  };
  if (cuda.cuDeviceGetName(name, sizeof name - 1, device) != CUDA_SUCCESS ||
      !attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, facts.major) ||
      !attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, facts.minor) ||
      !attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, facts.smCount) ||
      !attribute(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, facts.cooperative)) {
    whyNot = "cannot read the properties of a CUDA device";
    return std::nullopt;
  }
  facts.name = name;
  if (facts.major < 8) {
    whyNot = "device is " + deviceArch(facts) + " (" + facts.name +
             "); mkc's kernels need sm_80 or later";
    return std::nullopt;
  }
  return facts;
}

} // namespace

std::string cudaDriverVersion() {
  std::string whyNot;
  const CudaDriver *cuda = CudaDriver::load(whyNot);
  if (!cuda)
    return "not found (" + whyNot + ")";
  int version = 0;
  if (CUresult result = cuda->cuDriverGetVersion(&version); result != CUDA_SUCCESS)
    return "unknown (" + cuda->describe(result) + ")";
  // 12040 is 12.4.
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::unique_ptr<GpuDevice> GpuDevice::open(std::string &whyNot) { return openOrdinal(0, whyNot); }

int GpuDevice::count() {
  std::string whyNot;
  const CudaDriver *cuda = CudaDriver::load(whyNot);
  int count = 0;
  if (!cuda || cuda->cuInit(0) != CUDA_SUCCESS || cuda->cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

std::unique_ptr<GpuDevice> GpuDevice::openOrdinal(int ordinal, std::string &whyNot) {
  const CudaDriver *cuda = CudaDriver::load(whyNot);
  if (!cuda)
    return nullptr;
  CUresult started = cuda->cuInit(0);
  if (started == CUDA_ERROR_NO_DEVICE) {
    whyNot = "no CUDA device";
    return nullptr;
  }
  if (started != CUDA_SUCCESS) {
    whyNot = "the NVIDIA driver did not start: " + cuda->describe(started);
    return nullptr;
  }
  int count = 0;
  if (cuda->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    whyNot = "no CUDA device";
    return nullptr;
  }
  if (ordinal < 0 || ordinal >= count) {
    whyNot = "no CUDA device " + std::to_string(ordinal) + ": this machine has " +
             std::to_string(count);
    return nullptr;
  }
  CUdevice device = 0;
  CUresult found = cuda->cuDeviceGet(&device, ordinal);
  if (found != CUDA_SUCCESS) {
    whyNot = "cannot open CUDA device " + std::to_string(ordinal) + ": " + cuda->describe(found);
    return nullptr;
  }
  std::optional<DeviceFacts> facts = readFacts(*cuda, device, whyNot);
  if (!facts)
    return nullptr;
  CUcontext context = nullptr;
  CUresult retained = cuda->cuDevicePrimaryCtxRetain(&context, device);
  if (retained != CUDA_SUCCESS) {
    whyNot = "cannot create a context on " + facts->name + ": " + cuda->describe(retained);
    return nullptr;
  }
  return std::make_unique<CudaGpuDevice>(*cuda, device, context, std::move(*facts));
}

} // namespace mk
