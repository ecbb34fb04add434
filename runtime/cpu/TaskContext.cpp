#include "runtime/cpu/TaskContext.h"

#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/Bf16.h"
#include "core/protocol/AttentionLayout.h"
#include "core/protocol/FixedPoint.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>

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

// Element `index` of a Fixed64 buffer: its 8 bytes in two floats' room.
int64_t fixedAt(ExecutorMemory &memory, uint32_t buffer, uint64_t index) {
  int64_t value;
  std::memcpy(&value, memory.values(buffer).data() + 2 * index, sizeof value);
  return value;
}

void setFixed(ExecutorMemory &memory, uint32_t buffer, uint64_t index, int64_t value) {
  std::memcpy(memory.values(buffer).data() + 2 * index, &value, sizeof value);
}

std::string stampText(int64_t stamp, bool isSlot) {
  if (stamp == kNeverWritten)
    return "never written";
  if (stamp == kBeingWritten)
    return "being written by another task";
  return isSlot ? "written" : "last written by step " + std::to_string(stamp);
}

} // namespace

std::string TaskContext::stepText() const {
  const StepRow &first = input.rows.front();
  if (input.rows.size() == 1)
    return "at position " + std::to_string(first.position);
  return "in the step of " + std::to_string(input.rows.size()) + " rows from sequence " +
         std::to_string(first.sequence) + ", position " + std::to_string(first.position);
}

void TaskContext::fail(const std::string &problem) const {
  throw ExecutionError(describeTask(graph, task.id) + " " + stepText() + ": " + problem);
}

int64_t TaskContext::slotIndex(int64_t sequence, int64_t position) const {
  return sequence * graph.maxContext + position;
}

uint64_t TaskContext::slotOffset(uint32_t cache, int64_t sequence, int64_t position,
                                 uint64_t kvHead, uint64_t headDim) const {
  const uint64_t length = slotLength(graph, graph.buffers[cache]);
  const AttentionLayout layout{0, length / headDim, headDim, 0, 0};
  const uint64_t capacity = static_cast<uint64_t>(graph.maxContext);
  return static_cast<uint64_t>(sequence) * capacity * length +
         layout.cacheEntry(position, kvHead, capacity);
}

std::string TaskContext::where(uint32_t buffer, uint64_t offset, int64_t slot) const {
  const Buffer &named = graph.buffers[buffer];
  if (slot == kNoSlot)
    return "element " + std::to_string(offset) + " of buffer '" + named.name + "'";
  std::string sequence = graph.sequences == 1
                             ? ""
                             : " of sequence " + std::to_string(slot / graph.maxContext);
  return "element " + std::to_string(offset) + " of KV cache '" + named.name +
         "' (the slot of position " + std::to_string(slot % graph.maxContext) + sequence + ")";
}

std::vector<float> TaskContext::loadElements(uint32_t buffer, uint64_t offset, uint64_t count,
                                             int64_t expectedStamp, int64_t slot,
                                             int64_t peer) {
  ExecutorMemory &from = peer < 0 ? memory : *(*ranks)[peer];
  if (from.checked()) {
    std::atomic<int64_t> *stamps = from.stampsOf(buffer) + offset;
    for (uint64_t i = 0; i < count; ++i) {
      int64_t stamp = stamps[i].load(std::memory_order_acquire);
      if (stamp == expectedStamp)
        continue;
      if (peer >= 0)
        fail("read " + where(buffer, offset + i, kNoSlot) + " of rank " + std::to_string(peer) +
             " before that rank wrote it in this step (" + stampText(stamp, false) +
             "): a dependency is missing");
      fail("read " + where(buffer, offset + i, slot) + " before it was written" +
           (slot == kNoSlot ? " in this step" : "") + " (" + stampText(stamp, slot != kNoSlot) +
           "): a dependency is missing");
    }
    // What the task read here is checked again after it ran; another
    // rank's memory is not.
    if (peer < 0)
      reads.push_back({buffer, offset, count, expectedStamp});
  }
  if (graph.buffers[buffer].element == BufferElement::Fixed64) {
    std::vector<float> values(count);
    for (uint64_t i = 0; i < count; ++i)
      values[i] = fixedToFloat(fixedAt(from, buffer, offset + i));
    return values;
  }
  std::span<const float> values = from.values(buffer).subspan(offset, count);
  return std::vector<float>(values.begin(), values.end());
}

void TaskContext::storeElements(uint32_t buffer, uint64_t offset, std::span<const float> values,
                                int64_t stamp, int64_t slot) {
  std::atomic<int64_t> *stamps = memory.checked() ? memory.stampsOf(buffer) + offset : nullptr;
  if (stamps) {
    for (uint64_t i = 0; i < values.size(); ++i) {
      int64_t previous = stamps[i].exchange(kBeingWritten, std::memory_order_relaxed);
      if (previous == kBeingWritten || (slot == kNoSlot && previous == stamp))
        fail("wrote " + where(buffer, offset + i, slot) + ", which another task " +
             (previous == stamp ? "already wrote in this step" : "is writing"));
    }
    // The marks must be visible before any value changes.
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  if (graph.buffers[buffer].element == BufferElement::Fixed64) {
    for (uint64_t i = 0; i < values.size(); ++i)
      setFixed(memory, buffer, offset + i, floatToFixed(values[i]));
  } else {
    std::copy(values.begin(), values.end(), memory.values(buffer).begin() + offset);
  }
  if (stamps)
    for (uint64_t i = 0; i < values.size(); ++i)
      stamps[i].store(stamp, std::memory_order_release);
}

std::vector<float> TaskContext::load(uint32_t buffer, uint64_t r, uint64_t begin,
                                     uint64_t count) {
  uint64_t offset = r * rowLength(graph, graph.buffers[buffer]) + begin;
  return loadElements(buffer, offset, count, input.stamp, kNoSlot);
}

void TaskContext::store(uint32_t buffer, uint64_t r, uint64_t begin,
                        std::span<const float> values) {
  uint64_t offset = r * rowLength(graph, graph.buffers[buffer]) + begin;
  storeElements(buffer, offset, values, input.stamp, kNoSlot);
}

void TaskContext::accumulate(uint32_t buffer, uint64_t r, uint64_t begin,
                             std::span<const float> values) {
  uint64_t offset = r * rowLength(graph, graph.buffers[buffer]) + begin;
  if (graph.buffers[buffer].element != BufferElement::Fixed64)
    fail("adds into buffer '" + graph.buffers[buffer].name + "', which is not fixed64");
  if (memory.checked()) {
    std::atomic<int64_t> *stamps = memory.stampsOf(buffer) + offset;
    for (uint64_t i = 0; i < values.size(); ++i) {
      int64_t stamp = stamps[i].load(std::memory_order_acquire);
      if (stamp != input.stamp)
        fail("adds into " + where(buffer, offset + i, kNoSlot) +
             " before its seed was written in this step (" + stampText(stamp, false) +
             "): a dependency is missing");
    }
    reads.push_back({buffer, offset, values.size(), input.stamp});
  }
  std::lock_guard<std::mutex> turn(memory.additions());
  for (uint64_t i = 0; i < values.size(); ++i) {
    // Two's complement wraps as the GPU's 64-bit atomics do.
    uint64_t sum = static_cast<uint64_t>(fixedAt(memory, buffer, offset + i)) +
                   static_cast<uint64_t>(floatToFixed(values[i]));
    setFixed(memory, buffer, offset + i, static_cast<int64_t>(sum));
  }
}

std::vector<float> TaskContext::loadFromRank(int64_t rank, uint32_t buffer, uint64_t r,
                                            uint64_t begin, uint64_t count) {
  if (!ranks || rank == graph.rank)
    return load(buffer, r, begin, count);
  uint64_t offset = r * rowLength(graph, graph.buffers[buffer]) + begin;
  return loadElements(buffer, offset, count, input.stamp, kNoSlot, rank);
}

std::vector<float> TaskContext::loadSlot(uint32_t cache, int64_t sequence, int64_t position,
                                         uint64_t kvHead, uint64_t headDim) {
  int64_t slot = slotIndex(sequence, position);
  uint64_t offset = slotOffset(cache, sequence, position, kvHead, headDim);
  return loadElements(cache, offset, headDim, slot, slot);
}

void TaskContext::storeSlot(uint32_t cache, int64_t sequence, int64_t position, uint64_t kvHead,
                            std::span<const float> values) {
  int64_t slot = slotIndex(sequence, position);
  uint64_t offset = slotOffset(cache, sequence, position, kvHead, values.size());
  if (graph.buffers[cache].element == BufferElement::BF16) {
    std::vector<float> rounded(values.begin(), values.end());
    for (float &value : rounded)
      value = roundToBf16(value);
    storeElements(cache, offset, rounded, slot, slot);
    return;
  }
  storeElements(cache, offset, values, slot, slot);
}

int64_t TaskContext::loadToken(uint64_t r) {
  const StepRow &fed = input.rows[r];
  if (!fed.active)
    return 0;
  if (fed.forcedToken)
    return *fed.forcedToken;
  uint32_t buffer = graph.tokenBuffer;
  if (memory.checked()) {
    int64_t stamp = memory.stampsOf(buffer)[r].load(std::memory_order_acquire);
    if (stamp != input.stamp - 1)
      fail("read row " + std::to_string(r) +
           "'s token before the previous step's Argmax wrote it (" + stampText(stamp, false) +
           "): a dependency is missing");
    reads.push_back({buffer, r, 1, input.stamp - 1});
  }
  return memory.token(r);
}

void TaskContext::storeToken(uint64_t r, int64_t token) {
  uint32_t buffer = graph.tokenBuffer;
  std::atomic<int64_t> *stamp = memory.checked() ? memory.stampsOf(buffer) + r : nullptr;
  if (stamp) {
    int64_t previous = stamp->exchange(kBeingWritten, std::memory_order_relaxed);
    if (previous == input.stamp || previous == kBeingWritten)
      fail("wrote row " + std::to_string(r) + "'s token, which another task " +
           std::string(previous == input.stamp ? "already wrote in this step" : "is writing"));
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  if (token >= 0)
    memory.token(r) = token;
  if (stamp)
    stamp->store(input.stamp, std::memory_order_release);
  (*input.argmaxTokens)[input.step * input.rows.size() + r] = token;
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
             " while another task overwrote it (" + stampText(stamp, isSlot) +
             "): a dependency is missing");
    }
  }
}

} // namespace mk::cpu
