// What the CPU executors (one rank or several) check, in the words every
// engine uses: a graph and schedule before they are run (the validator, and
// the threads and bytes they take within the options' limits), and before
// each launch that a failed executor stays failed, tokens lie in the
// vocabulary, and the steps fit the context that is left.
#ifndef MKC_RUNTIME_CPU_LAUNCHCHECKS_H
#define MKC_RUNTIME_CPU_LAUNCHCHECKS_H

#include "core/validator/Validator.h"
#include "runtime/cpu/CpuExecutor.h"

#include <cstdint>
#include <span>
#include <string>

namespace mk::cpu {

// "" or what the validator finds: all of it, or the structure alone when
// the options say the dataflow was checked already (a loaded .mk).
inline std::string validateProgram(const TaskGraph &graph, const Schedule &schedule,
                                   const CpuExecutorOptions &options) {
  return options.validateDataflow ? validateSchedule(graph, schedule)
                                  : validateStructure(graph, schedule);
}

// `threads` emulated SMs, one thread each when threaded (`what` says whose),
// and `bytes` of buffers (`whose`), within the options' limits.
inline void checkLimits(uint64_t threads, const std::string &what, uint64_t bytes,
                        const std::string &whose, const CpuExecutorOptions &options) {
  if (options.threaded && threads > options.maxThreads)
    throw ExecutionError(what + ", more than the " + std::to_string(options.maxThreads) +
                         " threads allowed");
  if (bytes > options.maxMemoryBytes)
    throw ExecutionError(whose + " need " + std::to_string(bytes) + " bytes, more than the " +
                         std::to_string(options.maxMemoryBytes) + " allowed");
}

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
