// The buffers of a task graph in host memory. In checked mode every element
// also carries a stamp: the number of the step that last wrote it (for a KV
// cache slot, the slot's index), so a read can tell fresh data from a
// previous step's or from nothing at all. The KV caches may be another
// graph's, so that a prefill graph fills the caches its decode graph reads.
// A Fixed64 buffer keeps each value's 8 bytes in two floats' room, as the
// GPU's activation arena does, so that both hold the same bytes.
#ifndef MKC_RUNTIME_CPU_EXECUTORMEMORY_H
#define MKC_RUNTIME_CPU_EXECUTORMEMORY_H

#include "core/taskgraph/TaskGraph.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <map>
#include <mutex>
#include <string>
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
  // memory budget (bytesNeeded). With `caches`, the graph's KV caches are
  // those of `caches` of the same names (the caller has checked that they
  // agree: sharesKvCaches in core/taskgraph/StepRows.h).
  ExecutorMemory(const TaskGraph &graph, bool checked, const ExecutorMemory *caches = nullptr);

  // Bytes for the graph's buffers (and stamps when checked); UINT64_MAX on
  // overflow. Without the KV caches when they are shared.
  static uint64_t bytesNeeded(const TaskGraph &graph, bool checked, bool sharedCaches = false);

  // Floats of storage one value of a buffer takes (two for Fixed64).
  static uint64_t floatsPerValue(const Buffer &buffer);

  bool checked() const { return !stamps.empty(); }
  // Additions into Fixed64 buffers from the tasks' threads take turns.
  std::mutex &additions() { return additionsMutex; }
  std::span<float> values(uint32_t buffer) { return *buffers[buffer]; }
  std::span<const float> values(uint32_t buffer) const { return *buffers[buffer]; }
  // Only in checked mode.
  std::atomic<int64_t> *stampsOf(uint32_t buffer) { return stamps[buffer].get(); }
  // The Token buffer holds an integer per row, kept apart from the floats.
  int64_t &token(uint64_t row) { return tokens[row]; }

private:
  std::vector<std::shared_ptr<std::vector<float>>> buffers;
  std::vector<std::shared_ptr<std::atomic<int64_t>[]>> stamps;
  std::vector<int64_t> tokens;
  std::map<std::string, uint32_t> kvCaches; // buffer index by name
  std::mutex additionsMutex;
};

} // namespace mk::cpu

#endif
