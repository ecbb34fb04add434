#include "runtime/gpu/MemoryBudget.h"

#include "core/support/HumanBytes.h"

namespace mk {

std::string checkMemoryFits(const std::vector<MemoryNeed> &needs, uint64_t freeBytes,
                            uint64_t totalBytes, uint64_t reserveBytes) {
  uint64_t total = 0;
  for (const MemoryNeed &need : needs)
    total += need.bytes;
  if (total <= freeBytes && freeBytes - total >= reserveBytes)
    return "";
  std::string message = "the model needs " + humanBytes(total) + " of device memory (";
  for (size_t i = 0; i < needs.size(); ++i)
    message += (i ? ", " : "") + needs[i].what + " " + humanBytes(needs[i].bytes);
  message += ") and " + humanBytes(reserveBytes) + " to spare for a launch; the GPU has " +
             humanBytes(freeBytes) + " free of " + humanBytes(totalBytes);
  return message;
}

} // namespace mk
