#include "runtime/gpu/GpuRanks.h"

#include "runtime/format/ControlBlock.h"
#include "runtime/format/RankKernel.h"
#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/DeviceMemory.h"
#include "runtime/gpu/Nccl.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace mk {

namespace {

// Where the ranks' launches meet: each rank arrives once its counters are
// cleared, and all go on together; a rank that leaves a run without
// arriving (it failed first) lets the others go with false, launching
// nothing.
class LaunchBarrier {
public:
  explicit LaunchBarrier(int ranks) : ranks(ranks) {}

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    arrived = 0;
    broken = false;
  }
  bool arrive() {
    std::unique_lock<std::mutex> lock(mutex);
    if (++arrived == ranks)
      changed.notify_all();
    changed.wait(lock, [&] { return arrived >= ranks || broken; });
    return !broken;
  }
  // Called by every rank when its run ends: a rank that arrived ends only
  // after all did, so while some have not, this one failed before its launch.
  void leave() {
    std::lock_guard<std::mutex> lock(mutex);
    if (arrived < ranks) {
      broken = true;
      changed.notify_all();
    }
  }

private:
  int ranks, arrived = 0;
  bool broken = false;
  std::mutex mutex;
  std::condition_variable changed;
};

// The window's layout, the same on every rank: counters first, then the
// activation arena on a 256-byte boundary.
struct WindowLayout {
  uint64_t countersOffset = 0, activationsOffset = 0, bytes = 0;
};

WindowLayout windowLayout(const TaskGraph &rank) {
  WindowLayout layout;
  layout.activationsOffset = (uint64_t{rank.events.size()} * sizeof(uint32_t) + 255) / 256 * 256;
  layout.bytes = layout.activationsOffset + layOutArenas(rank).activationElements * sizeof(float);
  return layout;
}

class RankGroup final : public GpuRanks {
public:
  // `nccl`: the ranks on GPUs 0..count-1, through NCCL; nullptr: all on GPU 0.
  RankGroup(const CudaDriver &cuda, const Nccl *nccl, int count)
      : cuda(cuda), nccl(nccl), barrier(count), devices(count), comms(count, nullptr),
        windows(count, nullptr), windowMemory(count, nullptr), ownMemory(count),
        rankRecords(count) {}

  ~RankGroup() override {
    std::string ignored;
    for (size_t r = 0; r < devices.size(); ++r) {
      if (devices[r])
        devices[r]->makeCurrent(ignored);
      if (windows[r])
        nccl->commWindowDeregister(comms[r], windows[r]);
      if (nccl && windowMemory[r])
        nccl->memFree(windowMemory[r]);
      ownMemory[r] = DeviceMemory();
      rankRecords[r] = DeviceMemory();
    }
    for (NcclComm comm : comms)
      if (comm)
        nccl->commDestroy(comm);
    devices.clear(); // their contexts after NCCL's use of them
  }

  GpuStatus open(const Artifact &artifact, int64_t maxContext, std::string &error);
  std::string describe() const override { return description; }
  int ranks() const override { return static_cast<int>(devices.size()); }
  GpuStatus run(const GpuRunRequest &request, GpuRunResult &result, std::string &error) override;

private:
  bool checkNccl(NcclResult result, const std::string &what, std::string &error) const {
    error = nccl->describe(result, what);
    return error.empty();
  }
  bool checkCuda(CUresult result, const std::string &what, std::string &error) const {
    if (result == CUDA_SUCCESS)
      return true;
    error = what + ": " + cuda.describe(result);
    return false;
  }
  GpuStatus openDevices(const ScheduledGraph &rank, std::string &error);
  // Every rank's memory of `layout`, cleared: NCCL windows, or on one GPU
  // plain allocations.
  GpuStatus allocateWindows(const WindowLayout &layout, std::string &error);

  const CudaDriver &cuda;
  const Nccl *nccl;
  LaunchBarrier barrier;
  std::vector<std::unique_ptr<GpuDevice>> devices;
  std::vector<NcclComm> comms;
  std::vector<NcclWindow> windows;
  std::vector<void *> windowMemory;      // each rank's window's base
  std::vector<DeviceMemory> ownMemory;   // on one GPU: what windowMemory points at
  std::vector<DeviceMemory> rankRecords; // MkRanks, one per rank
  std::string description;
};

GpuStatus RankGroup::openDevices(const ScheduledGraph &rank, std::string &error) {
  const int count = ranks();
  for (int r = 0; r < count; ++r) {
    devices[r] = GpuDevice::openOrdinal(nccl ? r : 0, error);
    if (!devices[r]) {
      error = "rank " + std::to_string(r) + ": " + error;
      return GpuStatus::Unsupported;
    }
  }
  const uint32_t numSms = rank.schedule.numSms;
  if (!nccl && numSms * static_cast<uint64_t>(count) >
                   static_cast<uint64_t>(devices[0]->multiprocessors())) {
    error = std::to_string(count) + " ranks of " + std::to_string(numSms) +
            " SM queues do not fit one GPU of " + std::to_string(devices[0]->multiprocessors()) +
            " SMs side by side: compile with --num-sms=" +
            std::to_string(devices[0]->multiprocessors() / count) + " to check them on one GPU";
    return GpuStatus::Unsupported;
  }
  if (!nccl)
    return GpuStatus::Ok;
  std::vector<int> ordinals(count);
  for (int r = 0; r < count; ++r)
    ordinals[r] = r;
  // No NVLink multicast (NVLS): the kernel reads its peers by plain loads,
  // and multicast objects can take a shared host's GPUs out of service.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  if (!checkNccl(nccl->commInitAll(comms.data(), count, ordinals.data()),
                 "creating the NCCL communicator over " + std::to_string(count) + " GPUs", error))
    return GpuStatus::Failed;
  return GpuStatus::Ok;
}

GpuStatus RankGroup::allocateWindows(const WindowLayout &layout, std::string &error) {
  const int count = ranks();
  for (int r = 0; r < count; ++r) {
    if (!devices[r]->makeCurrent(error))
      return GpuStatus::Failed;
    if (nccl) {
      if (!checkNccl(nccl->memAlloc(&windowMemory[r], layout.bytes),
                     "allocating rank " + std::to_string(r) + "'s window of " +
                         std::to_string(layout.bytes) + " bytes",
                     error))
        return GpuStatus::Failed;
    } else {
      error = ownMemory[r].allocate(cuda, layout.bytes, "a rank's counters and activations");
      if (!error.empty())
        return GpuStatus::Failed;
      windowMemory[r] = reinterpret_cast<void *>(ownMemory[r].get());
    }
    if (!checkCuda(cuda.cuMemsetD8(reinterpret_cast<CUdeviceptr>(windowMemory[r]), 0,
                                   layout.bytes),
                   "clearing rank " + std::to_string(r) + "'s window", error))
      return GpuStatus::Failed;
  }
  if (!nccl)
    return GpuStatus::Ok;
  // Registered by all together: a collective call of every communicator.
  if (!checkNccl(nccl->groupStart(), "starting the windows' registration", error))
    return GpuStatus::Failed;
  for (int r = 0; r < count; ++r)
    if (!checkNccl(nccl->commWindowRegister(comms[r], windowMemory[r], layout.bytes,
                                            &windows[r], kNcclWindowSymmetric),
                   "registering rank " + std::to_string(r) + "'s window", error)) {
      nccl->groupEnd();
      return GpuStatus::Failed;
    }
  return checkNccl(nccl->groupEnd(), "registering the windows", error) ? GpuStatus::Ok
                                                                       : GpuStatus::Failed;
}

GpuStatus RankGroup::open(const Artifact &artifact, int64_t maxContext, std::string &error) {
  const int count = ranks();
  // Every rank's graph has rank 0's layout (checkRanks).
  if (GpuStatus opened = openDevices(artifact.ranks[0], error); opened != GpuStatus::Ok)
    return opened;
  WindowLayout layout = windowLayout(artifact.ranks[0].graph);
  if (GpuStatus allocated = allocateWindows(layout, error); allocated != GpuStatus::Ok)
    return allocated;

  for (int r = 0; r < count; ++r) {
    if (!devices[r]->makeCurrent(error))
      return GpuStatus::Failed;
    MkRanks record{};
    record.rank = static_cast<mk_u32>(r);
    record.ranks = static_cast<mk_u32>(count);
    record.window = reinterpret_cast<mk_u64>(windows[r]);
    record.countersOffset = layout.countersOffset;
    record.activationsOffset = layout.activationsOffset;
    if (!nccl)
      for (int q = 0; q < count; ++q)
        record.bases[q] = reinterpret_cast<mk_u64>(windowMemory[q]);
    error = rankRecords[r].allocate(cuda, sizeof record, "the ranks' record");
    if (!error.empty() ||
        !checkCuda(cuda.cuMemcpyHtoD(rankRecords[r].get(), &record, sizeof record),
                   "copying rank " + std::to_string(r) + "'s record", error))
      return GpuStatus::Failed;
    CUdeviceptr base = reinterpret_cast<CUdeviceptr>(windowMemory[r]);
    GpuRankLink link{base + layout.countersOffset, base + layout.activationsOffset,
                     rankRecords[r].get(), [this] { return barrier.arrive(); }};
    // One rank's weights cut in host memory at a time, let go once on its
    // GPU: the host never holds more than one rank's share.
    std::unique_ptr<RankArtifact> ranked = rankArtifact(artifact, r, error);
    if (!ranked)
      return GpuStatus::Unsupported;
    GpuStatus loaded = devices[r]->loadRank(ranked->artifact, link, maxContext, error);
    if (loaded != GpuStatus::Ok) {
      error = "rank " + std::to_string(r) + ": " + error;
      return loaded;
    }
  }
  description = nccl ? std::to_string(count) + " x " + devices[0]->describe() + "; NCCL " +
                           ncclVersionText(static_cast<uint32_t>(nccl->version()))
                     : std::to_string(count) + " ranks on one " + devices[0]->describe() +
                           " (a check: no NCCL)";
  return GpuStatus::Ok;
}

GpuStatus RankGroup::run(const GpuRunRequest &request, GpuRunResult &result,
                            std::string &error) {
  if (request.onToken) {
    error = "tensor-parallel runs stream no tokens yet";
    return GpuStatus::Refused;
  }
  const int count = ranks();
  std::vector<GpuRunResult> results(count);
  std::vector<GpuStatus> statuses(count, GpuStatus::Failed);
  std::vector<std::string> errors(count);
  barrier.reset();
  std::vector<std::thread> threads;
  for (int r = 0; r < count; ++r)
    threads.emplace_back([&, r] {
      statuses[r] = devices[r]->run(request, results[r], errors[r]);
      barrier.leave();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int r = 0; r < count; ++r)
    if (statuses[r] != GpuStatus::Ok) {
      error = "rank " + std::to_string(r) + ": " + errors[r];
      return statuses[r];
    }
  for (int r = 1; r < count; ++r)
    if (results[r].generated != results[0].generated || results[r].steps != results[0].steps) {
      error = "the ranks disagree: rank " + std::to_string(r) + " picked other tokens than rank 0";
      return GpuStatus::Failed;
    }
  result = std::move(results[0]);
  return GpuStatus::Ok;
}

} // namespace

std::unique_ptr<GpuRanks> GpuRanks::open(const Artifact &artifact, int64_t maxContext,
                                         RanksPlacement placement, GpuStatus &status,
                                         std::string &error) {
  status = GpuStatus::Unsupported;
  int count = static_cast<int>(artifact.ranks.size());
  if (count < 2 || artifact.rankKernel.cubin.empty()) {
    error = "the file holds no kernel of ranks: compile it with --tensor-parallel=N where NVRTC "
            "and NCCL's device API are";
    return nullptr;
  }
  const bool oneGpu = placement == RanksPlacement::OneGpu;
  if (!oneGpu && GpuDevice::count() < count) {
    error = "the file's " + std::to_string(count) + " ranks need " + std::to_string(count) +
            " GPUs; this machine has " + std::to_string(GpuDevice::count());
    return nullptr;
  }
  const CudaDriver *cuda = CudaDriver::load(error);
  if (!cuda)
    return nullptr;
  const Nccl *nccl = nullptr;
  if (!oneGpu) {
    nccl = Nccl::load(error);
    if (!nccl)
      return nullptr;
    // The kernel reads NCCL's windows as the headers it was linked with lay
    // them out: the same major and minor version.
    uint32_t linked = artifact.rankKernel.ncclVersion;
    uint32_t found = static_cast<uint32_t>(nccl->version());
    if (linked / 100 != found / 100) {
      error = "the ranks' kernel was linked with NCCL " + ncclVersionText(linked) +
              "'s device API; the NCCL found is " + ncclVersionText(found) +
              " (MKRT_NCCL_LIBRARY names another)";
      return nullptr;
    }
  }
  auto ranks = std::make_unique<RankGroup>(*cuda, nccl, count);
  status = ranks->open(artifact, maxContext, error);
  if (status != GpuStatus::Ok)
    return nullptr;
  return ranks;
}

} // namespace mk
