// Does the KV caches' layout hold long attention chunks at half the
// streaming rate? At 32768 positions the attention of the 1B shape reads
// its 1.07 GB of bf16 keys and values at ~2.4 TB/s, Qwen3-0.6B its 3.76 GB
// at ~2.4 (the H200 harness of 2026-12-07, against its rate at position 1),
// and a chunk timed with its arithmetic left out streamed at ~2.2 TB/s
// (bench/NOTES.md, item 4). The caches keep a layer's entries position by
// position, [position][KV head][head dim] (core/protocol/AttentionLayout.h's
// cacheEntry), so a chunk of one KV head reads rows of 128 or 256 bytes,
// numKvHeads rows apart; the chunks of the other heads read the rows in
// between, on other SMs, at about the same time. Head by head,
// [KV head][position][head dim], each chunk would read one contiguous run.
//
// One launch of one CTA of 512 threads a chunk (8 KV heads x 16 chunks of
// 2064 positions: the one round of a build for 32800), each CTA reading its
// chunk's key rows and then its value rows with IN_FLIGHT sixteen-byte
// non-caching loads a thread outstanding (8: 64 KiB an SM, about the
// staging ring's 96 KiB), consecutive threads taking consecutive 16-byte
// units of a row and then of the next row, as the ring's copies do:
//
//   position-major   row (p, h) at (p * heads + h) * rowBytes (the caches now)
//   head-major       row (p, h) at (h * positions + p) * rowBytes
//
// L2 is flushed before each launch.
//   kv_layout_stream [ROUNDS=15]
// prints one JSON object a case (layout, head dim, loads in flight): the
// median over rounds of the span from the first CTA's start to the last
// CTA's end, and the rate over it. If position-major streams well below
// head-major (and near the ~2.4 TB/s the harness sees), the layout is what
// holds long attention back, and the caches should be kept head by head.
#define PROBE_NAME "kv_layout_stream"
#include "Probe.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kThreads = 512;
constexpr int kHeads = 8, kChunks = 16, kChunkPositions = 2064;
constexpr int kPositions = kChunks * kChunkPositions;

// marks[2 * cta]: the CTA's start and end (globaltimer, ns).
// The row size is a template argument so that a unit's row and part are
// shifts, not 64-bit divisions that could make the loop's issue, not HBM,
// the bound.
template <int kInFlight, int kRowBytes>
__global__ void __launch_bounds__(kThreads, 1)
    readChunks(const char *keys, const char *values, bool headMajor, unsigned long long *marks,
               unsigned *sink) {
  const unsigned long long begin = globalTimer();
  const int head = blockIdx.x % kHeads, chunk = blockIdx.x / kHeads;
  constexpr int rowBytes = kRowBytes, unitsPerRow = kRowBytes / 16;
  const long long units = static_cast<long long>(kChunkPositions) * unitsPerRow;
  unsigned folded = 0;
  for (const char *cache : {keys, values}) {
    for (long long first = threadIdx.x; first < units; first += kThreads * kInFlight) {
      uint4 v[kInFlight];
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) {
        const long long u = first + static_cast<long long>(k) * kThreads;
        if (u < units) {
          const long long p = static_cast<long long>(chunk) * kChunkPositions + u / unitsPerRow;
          const long long row = headMajor ? head * static_cast<long long>(kPositions) + p
                                          : p * kHeads + head;
          v[k] = loadStreaming(
              reinterpret_cast<const uint4 *>(cache + row * rowBytes) + u % unitsPerRow);
        }
      }
#pragma unroll
      for (int k = 0; k < kInFlight; ++k)
        if (first + static_cast<long long>(k) * kThreads < units)
          folded ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    }
  }
  markCta(marks, begin);
  if (folded == 0x9e3779b9u) // practically never: only keeps the loads
    *sink = folded;
}

using Launch = void (*)(const char *, const char *, bool, unsigned long long *, unsigned *);

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  if (rounds < 1) {
    std::fprintf(stderr, "kv_layout_stream: ROUNDS must be a positive integer\n");
    return 2;
  }
  int l2Bytes = 0;
  CHECK(cudaDeviceGetAttribute(&l2Bytes, cudaDevAttrL2CacheSize, 0));
  const int ctas = kHeads * kChunks;
  const size_t mostRowBytes = 256; // heads of 128 bf16 dimensions
  const size_t cacheBytes = size_t(kPositions) * kHeads * mostRowBytes;
  const size_t flushBytes = size_t(4) * l2Bytes;
  char *keys, *values;
  uint4 *flush;
  unsigned *sink;
  unsigned long long *marks;
  CHECK(cudaMalloc(&keys, cacheBytes));
  CHECK(cudaMalloc(&values, cacheBytes));
  CHECK(cudaMemset(keys, 1, cacheBytes));
  CHECK(cudaMemset(values, 2, cacheBytes));
  CHECK(cudaMalloc(&flush, flushBytes));
  CHECK(cudaMemset(flush, 3, flushBytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&marks, 2 * ctas * sizeof(unsigned long long)));
  std::vector<unsigned long long> host(2 * ctas);
  const struct {
    int rowBytes, inFlight;
    Launch launch;
  } cases[] = {{128, 4, readChunks<4, 128>}, {128, 8, readChunks<8, 128>},
               {128, 16, readChunks<16, 128>}, {256, 4, readChunks<4, 256>},
               {256, 8, readChunks<8, 256>},   {256, 16, readChunks<16, 256>}};
  for (bool headMajor : {false, true})
    for (const auto &probe : cases) {
      const int rowBytes = probe.rowBytes;
      std::vector<double> spans;
      for (int round = 0; round < rounds; ++round) {
        flushL2<<<ctas * 4, 256>>>(flush, flushBytes / 16, sink);
        probe.launch<<<ctas, kThreads>>>(keys, values, headMajor, marks, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(host.data(), marks, host.size() * sizeof(host[0]),
                         cudaMemcpyDeviceToHost));
        spans.push_back(double(markedSpan(host)));
      }
      std::sort(spans.begin(), spans.end());
      const double span = spans[spans.size() / 2];
      const double bytes = 2.0 * kPositions * kHeads * rowBytes;
      std::printf("{\"layout\": \"%s\", \"head_dim_bf16\": %d, \"loads_in_flight\": %d, "
                  "\"kib_in_flight_per_sm\": %d, \"ctas\": %d, \"mb\": %.1f, \"span_us\": %.2f, "
                  "\"span_min_us\": %.2f, \"tb_per_s\": %.3f}\n",
                  headMajor ? "head-major" : "position-major", rowBytes / 2, probe.inFlight,
                  probe.inFlight * kThreads * 16 / 1024, ctas, bytes / 1e6, span / 1e3,
                  spans[0] / 1e3, bytes / span / 1e3);
    }
  return 0;
}
