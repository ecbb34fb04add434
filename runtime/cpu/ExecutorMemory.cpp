#include "runtime/cpu/ExecutorMemory.h"

namespace mk::cpu {

ExecutorMemory::ExecutorMemory(const TaskGraph &graph, bool checked, const ExecutorMemory *caches)
    : tokens(graph.rows, 0) {
  for (uint32_t index = 0; index < graph.buffers.size(); ++index) {
    const Buffer &buffer = graph.buffers[index];
    bool shared = caches && buffer.kind == BufferKind::KVCache;
    // The same cache in the graph of `caches`: its layer's, by name.
    uint32_t theirs = shared ? caches->kvCaches.at(buffer.name) : 0;
    if (buffer.kind == BufferKind::KVCache)
      kvCaches[buffer.name] = index;
    buffers.push_back(shared ? caches->buffers[theirs]
                             : std::make_shared<std::vector<float>>(
                                   buffer.kind == BufferKind::Token ? 0 : floatsPerValue(buffer) * buffer.elements,
                                   0.0f));
    if (!checked)
      continue;
    if (shared && !caches->stamps.empty()) {
      stamps.push_back(caches->stamps[theirs]);
      continue;
    }
    stamps.emplace_back(new std::atomic<int64_t>[buffer.elements]);
    for (uint64_t i = 0; i < buffer.elements; ++i)
      stamps.back()[i].store(kNeverWritten, std::memory_order_relaxed);
  }
}

uint64_t ExecutorMemory::floatsPerValue(const Buffer &buffer) {
  return buffer.element == BufferElement::Fixed64 ? 2 : 1;
}

uint64_t ExecutorMemory::bytesNeeded(const TaskGraph &graph, bool checked, bool sharedCaches) {
  uint64_t total = 0;
  for (const Buffer &buffer : graph.buffers) {
    if (sharedCaches && buffer.kind == BufferKind::KVCache)
      continue;
    uint64_t perElement = floatsPerValue(buffer) * sizeof(float) +
                          (checked ? sizeof(std::atomic<int64_t>) : 0);
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(buffer.elements, perElement, &bytes) ||
        __builtin_add_overflow(total, bytes, &total))
      return UINT64_MAX;
  }
  return total;
}

} // namespace mk::cpu
