// What `mkc compile` tells a person while it works: each phase (import,
// passes, task graph, schedule, kernel, write) on stderr with its elapsed
// time once done, and, when stderr is a terminal, a progress line naming
// the phase under way, since a large model spends seconds to minutes in
// import (dequantization) and in the kernel's compilation.
#ifndef MKC_COMPILER_DRIVER_COMPILEPHASES_H
#define MKC_COMPILER_DRIVER_COMPILEPHASES_H

#include <chrono>
#include <string>

namespace mk {

class CompilePhases {
public:
  // `total`: how many phases the command runs, for the progress line.
  explicit CompilePhases(int total);

  // One phase, from its construction to its destruction (which reports it,
  // failed or not, so a progress line is never left half written).
  class Phase {
  public:
    Phase(CompilePhases *phases, const char *name);
    ~Phase();
    Phase(const Phase &) = delete;
    Phase &operator=(const Phase &) = delete;

  private:
    CompilePhases *phases;
    const char *name;
    std::chrono::steady_clock::time_point start;
  };

private:
  int total;
  int done = 0;
  bool terminal;
};

} // namespace mk

#endif
