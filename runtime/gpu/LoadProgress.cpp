#include "runtime/gpu/LoadProgress.h"

#include <cstdio>
#include <unistd.h>

namespace mk {

namespace {

double gib(uint64_t bytes) { return static_cast<double>(bytes) / double(uint64_t{1} << 30); }

} // namespace

LoadProgress::LoadProgress(std::string what, uint64_t totalBytes)
    : what(std::move(what)), total(totalBytes), terminal(::isatty(STDERR_FILENO) == 1),
      shown(terminal || totalBytes >= kBigLoadBytes), start(std::chrono::steady_clock::now()),
      lastShown(start) {
  if (shown && !terminal)
    std::fprintf(stderr, "mkrt: copying %s to the GPU: %.1f GiB\n", this->what.c_str(), gib(total));
}

LoadProgress::~LoadProgress() {
  if (shown)
    show(true);
}

void LoadProgress::advance(uint64_t bytes) {
  done += bytes;
  auto now = std::chrono::steady_clock::now();
  // A few updates a second: a terminal line, not a log.
  if (terminal && now - lastShown >= std::chrono::milliseconds(200)) {
    lastShown = now;
    show(false);
  }
}

void LoadProgress::show(bool last) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int percent = total ? static_cast<int>(100.0 * static_cast<double>(done) / double(total)) : 100;
  if (terminal)
    std::fprintf(stderr, "\rmkrt: %s %.1f / %.1f GiB, %d%%, %.1f s%s", what.c_str(), gib(done),
                 gib(total), percent, seconds, last ? "\n" : "");
  else
    std::fprintf(stderr, "mkrt: copied %.1f GiB of %s to the GPU in %.1f s\n", gib(done),
                 what.c_str(), seconds);
  std::fflush(stderr);
}

} // namespace mk
