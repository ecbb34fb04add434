#include "runtime/gpu/MemoryBudget.h"

#include <cstdio>

namespace mk {

std::string formatBytes(uint64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}

std::string checkMemoryFits(const std::vector<MemoryNeed> &needs, uint64_t freeBytes,
                            uint64_t totalBytes, uint64_t reserveBytes) {
  uint64_t total = 0;
  for (const MemoryNeed &need : needs)
    total += need.bytes;
  if (total <= freeBytes && freeBytes - total >= reserveBytes)
    return "";
  std::string message = "the model needs " + formatBytes(total) + " of device memory (";
  for (size_t i = 0; i < needs.size(); ++i)
    message += (i ? ", " : "") + needs[i].what + " " + formatBytes(needs[i].bytes);
  message += ") and " + formatBytes(reserveBytes) + " to spare for a launch; the GPU has " +
             formatBytes(freeBytes) + " free of " + formatBytes(totalBytes);
  return message;
}

} // namespace mk
