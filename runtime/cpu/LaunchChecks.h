// What the CPU executors (one rank or several) check before a launch, in
// the words every engine uses: a failed executor stays failed, tokens lie
// in the vocabulary, and the steps fit the context that is left.
#ifndef MKC_RUNTIME_CPU_LAUNCHCHECKS_H
#define MKC_RUNTIME_CPU_LAUNCHCHECKS_H

#include "runtime/cpu/CpuExecutor.h"

#include <cstdint>
#include <span>
#include <string>

namespace mk::cpu {

// After a failed step the caches may be half written.
inline void checkNotFailed(const std::string &failure) {
  if (!failure.empty())
    throw ExecutionError("the executor stopped after an earlier error: " + failure);
}

inline void checkTokensInVocabulary(std::span<const int64_t> tokens, uint64_t vocabulary) {
  for (int64_t token : tokens)
    if (token < 0 || static_cast<uint64_t>(token) >= vocabulary)
      throw ExecutionError("token " + std::to_string(token) + " is outside the vocabulary of " +
                           std::to_string(vocabulary));
}

// `count` of `what` (positions each: "more steps", "prompt tokens") from
// `position` must end within `maxContext`.
inline void checkContextRoom(int64_t count, const char *what, int64_t position,
                             int64_t maxContext) {
  if (count > maxContext - position)
    throw ExecutionError("the context is full: " + std::to_string(count) + " " + what +
                         " from position " + std::to_string(position) + " pass maxContext " +
                         std::to_string(maxContext));
}

} // namespace mk::cpu

#endif
