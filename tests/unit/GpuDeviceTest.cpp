// GpuDevice::open on a machine without an NVIDIA driver: no device, and a
// message that says why. Where libcuda.so.1 exists, the GPU tests
// (tests/gpu, label `gpu`) cover the device instead.
#include "runtime/gpu/GpuDevice.h"

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
