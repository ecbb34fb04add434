// The line a long weight upload shows on stderr: on a terminal, one line
// rewritten as the bytes go ("mkrt: weights 3.2 / 15.0 GiB, 21%"); off a
// terminal, for a load big enough to take a while, a line when it starts
// and one when it ends, so that a log shows where the time went. Small
// loads off a terminal (tests, pipes) print nothing.
#ifndef MKC_RUNTIME_GPU_LOADPROGRESS_H
#define MKC_RUNTIME_GPU_LOADPROGRESS_H

#include <chrono>
#include <cstdint>
#include <string>

namespace mk {

class LoadProgress {
public:
  // Loads of at least this many bytes are told of off a terminal too.
  static constexpr uint64_t kBigLoadBytes = uint64_t{2} << 30;

  LoadProgress(std::string what, uint64_t totalBytes);
  ~LoadProgress(); // ends the line
  void advance(uint64_t bytes);

private:
  void show(bool last);

  std::string what;
  uint64_t total, done = 0;
  bool terminal, shown;
  std::chrono::steady_clock::time_point start, lastShown;
};

} // namespace mk

#endif
