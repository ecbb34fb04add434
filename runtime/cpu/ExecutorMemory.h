// The buffers of a task graph in host memory. In checked mode every element
// also carries a stamp: the position of the step that last wrote it (for a
// KV cache slot, the slot's position), so a read can tell fresh data from a
// previous step's or from nothing at all.
#ifndef MKC_RUNTIME_CPU_EXECUTORMEMORY_H
#define MKC_RUNTIME_CPU_EXECUTORMEMORY_H

#include "core/taskgraph/TaskGraph.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace mk::cpu {

constexpr int64_t kNeverWritten = std::numeric_limits<int64_t>::min();
// Set before the values change and replaced by the position after, so that a
// reader rechecking its stamps after copying cannot miss a write that
// overlapped the copy.
constexpr int64_t kBeingWritten = kNeverWritten + 1;

class ExecutorMemory {
public:
  // Assumes a validated graph; the caller has checked the size against its
  // memory budget (bytesNeeded).
  ExecutorMemory(const TaskGraph &graph, bool checked);

  // Bytes for the graph's buffers (and stamps when checked); UINT64_MAX on
  // overflow.
  static uint64_t bytesNeeded(const TaskGraph &graph, bool checked);

  bool checked() const { return !stamps.empty(); }
  std::span<float> values(uint32_t buffer) { return buffers[buffer]; }
  std::span<const float> values(uint32_t buffer) const { return buffers[buffer]; }
  // Only in checked mode.
  std::atomic<int64_t> *stampsOf(uint32_t buffer) { return stamps[buffer].get(); }
  // The one Token buffer holds an integer, kept apart from the floats.
  int64_t &token() { return tokenValue; }

private:
  std::vector<std::vector<float>> buffers;
  std::vector<std::unique_ptr<std::atomic<int64_t>[]>> stamps;
  int64_t tokenValue = 0;
};

} // namespace mk::cpu

#endif
