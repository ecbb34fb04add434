#include "runtime/cpu/TaskContext.h"

#include "core/taskgraph/TaskNames.h"
#include "runtime/cpu/CpuExecutor.h"

#include <algorithm>
#include <atomic>
#include <bit>

namespace mk::cpu {

std::span<const float> BoundMatrix::elements(uint64_t begin, uint64_t count,
                                             std::vector<float> &scratch) const {
  if (bf16.empty())
    return f32.subspan(begin, count);
  scratch.resize(count);
  const uint16_t *bits = bf16.data() + begin;
  for (uint64_t i = 0; i < count; ++i)
    scratch[i] = std::bit_cast<float>(static_cast<uint32_t>(bits[i]) << 16);
  return scratch;
}

namespace {

constexpr int64_t kNoSlot = -1;

std::string stampText(int64_t stamp) {
  if (stamp == kNeverWritten)
    return "never written";
  if (stamp == kBeingWritten)
    return "being written by another task";
  return "last written at position " + std::to_string(stamp);
}

} // namespace

void TaskContext::fail(const std::string &problem) const {
  throw ExecutionError(describeTask(graph, task.id) + " at position " + std::to_string(position) +
                       ": " + problem);
}

std::string TaskContext::where(uint32_t buffer, uint64_t offset, int64_t slot) const {
  const Buffer &named = graph.buffers[buffer];
  if (slot == kNoSlot)
    return "element " + std::to_string(offset) + " of buffer '" + named.name + "'";
  uint64_t slotElements = named.elements / graph.maxContext;
  return "element " + std::to_string(offset - slot * slotElements) + " of slot " +
         std::to_string(slot) + " of KV cache '" + named.name + "'";
}

std::vector<float> TaskContext::loadElements(uint32_t buffer, uint64_t offset, uint64_t count,
                                             int64_t expectedStamp, int64_t slot) {
  if (memory.checked()) {
    std::atomic<int64_t> *stamps = memory.stampsOf(buffer) + offset;
    for (uint64_t i = 0; i < count; ++i) {
      int64_t stamp = stamps[i].load(std::memory_order_acquire);
      if (stamp != expectedStamp)
        fail("read " + where(buffer, offset + i, slot) + " before it was written for position " +
             std::to_string(expectedStamp) + " (" + stampText(stamp) +
             "): a dependency is missing");
    }
    reads.push_back({buffer, offset, count, expectedStamp});
  }
  std::span<const float> values = memory.values(buffer).subspan(offset, count);
  return std::vector<float>(values.begin(), values.end());
}

void TaskContext::storeElements(uint32_t buffer, uint64_t offset, std::span<const float> values,
                                int64_t stamp, int64_t slot) {
  std::atomic<int64_t> *stamps = memory.checked() ? memory.stampsOf(buffer) + offset : nullptr;
  if (stamps) {
    for (uint64_t i = 0; i < values.size(); ++i) {
      int64_t previous = stamps[i].exchange(kBeingWritten, std::memory_order_relaxed);
      if (previous == stamp || previous == kBeingWritten)
        fail("wrote " + where(buffer, offset + i, slot) + ", which another task " +
             (previous == stamp ? "already wrote" : "is writing") + " for position " +
             std::to_string(stamp));
    }
    // The marks must be visible before any value changes.
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  std::copy(values.begin(), values.end(), memory.values(buffer).begin() + offset);
  if (stamps)
    for (uint64_t i = 0; i < values.size(); ++i)
      stamps[i].store(stamp, std::memory_order_release);
}

std::vector<float> TaskContext::load(uint32_t buffer, uint64_t begin, uint64_t count) {
  return loadElements(buffer, begin, count, position, kNoSlot);
}

void TaskContext::store(uint32_t buffer, uint64_t begin, std::span<const float> values) {
  storeElements(buffer, begin, values, position, kNoSlot);
}

std::vector<float> TaskContext::loadSlot(uint32_t cache, int64_t slot, uint64_t begin,
                                         uint64_t count) {
  uint64_t slotElements = graph.buffers[cache].elements / graph.maxContext;
  return loadElements(cache, slot * slotElements + begin, count, slot, slot);
}

void TaskContext::storeSlot(uint32_t cache, int64_t slot, uint64_t begin,
                            std::span<const float> values) {
  uint64_t slotElements = graph.buffers[cache].elements / graph.maxContext;
  storeElements(cache, slot * slotElements + begin, values, slot, slot);
}

int64_t TaskContext::loadToken() {
  if (input.forcedToken)
    return *input.forcedToken;
  uint32_t buffer = graph.tokenBuffer;
  if (memory.checked()) {
    int64_t stamp = memory.stampsOf(buffer)[0].load(std::memory_order_acquire);
    if (stamp != position - 1)
      fail("read the token before the previous step's Argmax wrote it (" + stampText(stamp) +
           "): a dependency is missing");
    reads.push_back({buffer, 0, 1, position - 1});
  }
  return memory.token();
}

void TaskContext::storeToken(int64_t token) {
  uint32_t buffer = graph.tokenBuffer;
  std::atomic<int64_t> *stamp = memory.checked() ? memory.stampsOf(buffer) : nullptr;
  if (stamp) {
    int64_t previous = stamp->exchange(kBeingWritten, std::memory_order_relaxed);
    if (previous == position || previous == kBeingWritten)
      fail("wrote the token, which another task " +
           std::string(previous == position ? "already wrote" : "is writing") +
           " for position " + std::to_string(position));
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  memory.token() = token;
  if (stamp)
    stamp->store(position, std::memory_order_release);
  (*input.argmaxTokens)[input.step] = token;
}

void TaskContext::recheckReads() {
  // The copies made by the loads come before these stamp loads.
  std::atomic_thread_fence(std::memory_order_acquire);
  for (const Read &read : reads) {
    std::atomic<int64_t> *stamps = memory.stampsOf(read.buffer) + read.offset;
    bool isSlot = graph.buffers[read.buffer].kind == BufferKind::KVCache;
    for (uint64_t i = 0; i < read.count; ++i) {
      int64_t stamp = stamps[i].load(std::memory_order_acquire);
      if (stamp != read.stamp)
        fail("read " + where(read.buffer, read.offset + i, isSlot ? read.stamp : kNoSlot) +
             " while another task overwrote it (" + stampText(stamp) +
             "): a dependency is missing");
    }
  }
}

} // namespace mk::cpu
