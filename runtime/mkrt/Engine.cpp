// What every engine shares: cutting a generation at its EOS, checking a
// teacher-forced run's logits, and the answer of an engine that runs no
// batches.
#include "runtime/mkrt/Engine.h"

#include <algorithm>

namespace mk::rt {

BatchGeneration Engine::generateBatch(const std::vector<std::vector<int64_t>> &, int64_t,
                                      int64_t, bool, const TokenPicking &) {
  throw EngineError(MKRT_ERROR_UNSUPPORTED,
                    "batches run on the CPU executor so far: " + describe() +
                        " runs one sequence a step (a session on device cpu runs them)");
}

std::vector<float> teacherForcedLogits(std::vector<float> logits, size_t tokens,
                                       const Artifact &artifact, const std::string &engine) {
  size_t expected = tokens * static_cast<size_t>(artifact.facts.vocab);
  if (logits.size() != expected)
    throw EngineError(MKRT_ERROR_EXECUTION, engine + " returned " +
                                                std::to_string(logits.size()) +
                                                " logits, expected " + std::to_string(expected));
  return logits;
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
