// What every engine shares: cutting a generation at its EOS, and the
// answer of an engine that runs no batches.
#include "runtime/mkrt/Engine.h"

#include <algorithm>

namespace mk::rt {

BatchGeneration Engine::generateBatch(const std::vector<std::vector<int64_t>> &, int64_t,
                                      int64_t, bool, const TokenPicking &) {
  throw EngineError(MKRT_ERROR_UNSUPPORTED,
                    "batches run on the CPU executor so far: " + describe() +
                        " runs one sequence a step (a session on device cpu runs them)");
}

std::vector<int64_t> cutAtEos(std::vector<int64_t> tokens, const std::vector<int64_t> &eos,
                              bool &stopped) {
  auto end = std::find_first_of(tokens.begin(), tokens.end(), eos.begin(), eos.end());
  stopped = end != tokens.end();
  if (stopped)
    tokens.erase(end + 1, tokens.end());
  return tokens;
}

} // namespace mk::rt
