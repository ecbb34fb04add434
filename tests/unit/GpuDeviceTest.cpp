// GpuDevice::open on a machine without an NVIDIA driver: no device, and a
// message that says why. Where libcuda.so.1 exists, the GPU tests
// (tests/gpu, label `gpu`) cover the device instead. And the kernel's
// error words as the host words them.
#include "ToyTaskGraph.h"

#include "core/taskgraph/TaskNames.h"
#include "runtime/gpu/DeviceErrors.h"
#include "runtime/gpu/GpuDevice.h"
#include "runtime/gpu/GpuRanks.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

namespace mk {
namespace {

bool driverInstalled() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library)
    dlclose(library);
  return library != nullptr;
}

TEST(GpuDeviceTest, WithoutADriverOpenSaysSo) {
  if (driverInstalled())
    GTEST_SKIP() << "libcuda.so.1 is installed here: tests/gpu covers the device";
  std::string whyNot;
  std::unique_ptr<GpuDevice> device = GpuDevice::open(whyNot);
  EXPECT_EQ(device, nullptr);
  EXPECT_EQ(whyNot, "libcuda.so.1 not found: no NVIDIA driver on this machine");
}

// A file of ranks asks for as many GPUs; without a driver there are none,
// and a file without the ranks' kernel is refused first, saying so.
TEST(GpuDeviceTest, WithoutADriverRanksHaveNoGpus) {
  if (driverInstalled())
    GTEST_SKIP() << "libcuda.so.1 is installed here: tests/gpu covers the ranks";
  EXPECT_EQ(GpuDevice::count(), 0);
  Artifact artifact;
  artifact.ranks.resize(2);
  GpuStatus status = GpuStatus::Ok;
  std::string error;
  EXPECT_EQ(GpuRanks::open(artifact, 0, RanksPlacement::OwnGpus, status, error), nullptr);
  EXPECT_EQ(status, GpuStatus::Unsupported);
  EXPECT_NE(error.find("holds no kernel of ranks"), std::string::npos) << error;
  artifact.rankKernel = {22809, {0x7f, 'E', 'L', 'F'}};
  EXPECT_EQ(GpuRanks::open(artifact, 0, RanksPlacement::OwnGpus, status, error), nullptr);
  EXPECT_EQ(status, GpuStatus::Unsupported);
  EXPECT_NE(error.find("ranks need 2 GPUs; this machine has 0"), std::string::npos) << error;
}

// A wait on another rank that timed out names that rank, the waiting task,
// the event and the count; a launch whose ranks do not match says so.
TEST(DeviceErrorsTest, NameTheRankTaskAndEventOfAWaitAcrossRanks) {
  toy::ToyModel toy = toy::buildToyModel();
  MkControlBlock control{};
  control.error = MK_ERROR_RANK_WAIT_TIMEOUT;
  control.errorTask = 3;
  control.errorEvent = toy.graph.tasks[2].trigger;
  control.errorStep = 5;
  control.errorSm = 1;
  control.errorDetail = (int64_t{1} << 32) | 7;
  std::string text = describeDeviceError(control, toy.graph);
  EXPECT_EQ(text, "MK_ERROR_RANK_WAIT_TIMEOUT: " + describeTask(toy.graph, 3) +
                      " at step 5 on SM 1 waited on " +
                      describeEvent(toy.graph, control.errorEvent) +
                      " of rank 1 to reach 7 for longer than the bound");
  control = {};
  control.error = MK_ERROR_LAUNCH_MISMATCH;
  control.errorDetail = MK_MISMATCH_RANKS;
  EXPECT_EQ(describeDeviceError(control, toy.graph),
            "MK_ERROR_LAUNCH_MISMATCH: the schedule's ranks are not the kernel's, or the launch "
            "names no rank of them");
}

TEST(GpuDeviceTest, OpenTwiceGivesTheSameAnswer) {
  std::string first, second;
  std::unique_ptr<GpuDevice> a = GpuDevice::open(first);
  a.reset();
  std::unique_ptr<GpuDevice> b = GpuDevice::open(second);
  EXPECT_EQ(a == nullptr, b == nullptr);
  EXPECT_EQ(first, second);
}

} // namespace
} // namespace mk
