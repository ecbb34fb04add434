// The GPU upload's progress on stderr off a terminal (ctest, a log): nothing
// for a small load, a line when a big one starts and one when it ends.
#include "runtime/gpu/LoadProgress.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace mk {
namespace {

TEST(LoadProgress, OffATerminalOnlyABigLoadIsTold) {
  if (::isatty(STDERR_FILENO))
    GTEST_SKIP() << "stderr is a terminal: the line is rewritten in place there";
  ::testing::internal::CaptureStderr();
  {
    LoadProgress small("the weights", uint64_t{100} << 20);
    small.advance(uint64_t{100} << 20);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  ::testing::internal::CaptureStderr();
  {
    LoadProgress big("the weights", uint64_t{3} << 30);
    for (int i = 0; i < 3; ++i)
      big.advance(uint64_t{1} << 30);
  }
  std::string told = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(told.rfind("mkrt: copying the weights to the GPU: 3.0 GiB\n"
                       "mkrt: copied 3.0 GiB of the weights to the GPU in ",
                       0),
            0u)
      << told;
  EXPECT_EQ(told.back(), '\n');
}

} // namespace
} // namespace mk
