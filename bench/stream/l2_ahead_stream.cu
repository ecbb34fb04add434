// Can SMs with nothing to stream make another phase's weights cheaper by
// asking L2 for them first? On the 1B shape the attention phase leaves HBM
// idle for ~5-7 us a layer while 36-52 of 132 SMs run no chunk (80-96
// chunk tasks at 480 positions), and gate_up's 67.7 MB then stream at ~4 TB/s
// over ~17 us (bench/NOTES.md). If those SMs asked L2 for the first part of
// every SM's gate_up tile during the attention, gate_up would read that
// part from L2. Asked of the SMs that run the chunks themselves it lost
// (2026-12-02: the chunks waited behind the walk), and 20 us ahead it did
// not shorten gate_up at all; this probe asks whether it can, outside the
// kernel, before anything is built into it.
//
// One launch of one CTA of 512 threads an SM, each SM streaming its own
// slice of SLICE bytes with 8 sixteen-byte non-caching loads a thread in
// flight (64 KiB an SM, the gemvs' first batch), as a gemv tile does.
// Before it streams, every CTA idles DELAY us (the attention), and during
// that time the last P CTAs ask L2 for the first AHEAD bytes of every
// slice, P taking slice s where s % P is theirs:
//
//   none    no one asks
//   bulk    cp.async.bulk.prefetch.L2 (the copy engine: no registers, no
//           completion), 32 KiB an instruction
//   lines   prefetch.global.L2 of each 128-byte line, a line a thread
//   loads   plain loads of every 16 bytes, folded and dropped: the bytes are
//           surely in L2 once the loads return (the reference)
//
// L2 is flushed before each launch by reading a buffer twice its size.
//   l2_ahead_stream [ROUNDS=15]
// prints one JSON object a case: the median over rounds of the span (the
// first CTA's stream start to the last CTA's end) and of each CTA's own
// stream time, and the rate over the span. If `bulk` at AHEAD = 128 KiB
// shortens the span by about the bytes asked over the HBM rate, the
// split-by-SM prefetch is worth building (gate_up -2 to -4 us a layer).
#define PROBE_NAME "l2_ahead_stream"
#include "Probe.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kThreads = 512, kInFlight = 8;
constexpr unsigned kBulkPiece = 32 * 1024;
enum Ahead { kNone = 0, kBulk = 1, kLines = 2, kLoads = 3 };
const char *const kAheadNames[] = {"none", "bulk", "lines", "loads"};

// The first `ahead` bytes of slice `slice`, asked for by this CTA's threads.
__device__ unsigned askAhead(int how, const char *slice, size_t ahead) {
  unsigned folded = 0;
  if (how == kBulk) {
    for (size_t done = size_t(threadIdx.x) * kBulkPiece; done < ahead;
         done += size_t(kThreads) * kBulkPiece) {
      unsigned piece = unsigned(min(ahead - done, size_t(kBulkPiece)));
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(slice + done), "r"(piece)
                   : "memory");
    }
  } else if (how == kLines) {
    for (size_t line = size_t(threadIdx.x) * 128; line < ahead; line += size_t(kThreads) * 128)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(slice + line) : "memory");
  } else if (how == kLoads) {
    const uint4 *units = reinterpret_cast<const uint4 *>(slice);
    for (size_t i = threadIdx.x; i < ahead / 16; i += kThreads) {
      uint4 v;
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(units + i));
      folded ^= v.x ^ v.w;
    }
  }
  return folded;
}

// marks[2 * cta]: the CTA's stream start and end (globaltimer, ns).
__global__ void __launch_bounds__(kThreads, 1)
    streamSlices(const char *weights, size_t sliceBytes, int how, size_t ahead, int askers,
                 long long delayNs, unsigned long long *marks, unsigned *sink) {
  __shared__ unsigned long long started;
  if (threadIdx.x == 0)
    started = globalTimer();
  __syncthreads();
  unsigned folded = 0;
  const int asker = int(blockIdx.x) - (int(gridDim.x) - askers);
  if (how != kNone && asker >= 0)
    for (unsigned s = asker; s < gridDim.x; s += askers)
      folded ^= askAhead(how, weights + size_t(s) * sliceBytes, ahead);
  // The attention: nothing streams until the delay has passed.
  while (globalTimer() < started + delayNs) {
  }
  __syncthreads();
  const unsigned long long begin = globalTimer();
  const uint4 *slice = reinterpret_cast<const uint4 *>(weights + size_t(blockIdx.x) * sliceBytes);
  const size_t units = sliceBytes / 16;
  for (size_t first = threadIdx.x; first < units; first += size_t(kThreads) * kInFlight) {
    uint4 v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (first + size_t(k) * kThreads < units)
        v[k] = loadStreaming(slice + first + size_t(k) * kThreads);
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (first + size_t(k) * kThreads < units)
        folded ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  markCta(marks, begin);
  if (folded == 0x9e3779b9u) // practically never: only keeps the loads
    *sink = folded;
}

struct Case {
  int how;
  size_t ahead;
  int askers;
  long long delayUs;
};

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  if (rounds < 1) {
    std::fprintf(stderr, "l2_ahead_stream: ROUNDS must be a positive integer\n");
    return 2;
  }
  int sms = 0, l2Bytes = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&l2Bytes, cudaDevAttrL2CacheSize, 0));
  const size_t sliceBytes = 512 * 1024; // a 1B gate_up tile: 67.7 MB over 132 SMs
  char *weights;
  uint4 *flush;
  unsigned *sink;
  unsigned long long *marks;
  const size_t flushBytes = size_t(4) * l2Bytes;
  CHECK(cudaMalloc(&weights, sliceBytes * sms));
  CHECK(cudaMemset(weights, 1, sliceBytes * sms));
  CHECK(cudaMalloc(&flush, flushBytes));
  CHECK(cudaMemset(flush, 2, flushBytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&marks, 2 * sms * sizeof(unsigned long long)));
  std::vector<unsigned long long> host(2 * sms);
  const int idle = sms * 52 / 132; // the SMs with no chunk on the 1B shape at 480
  const std::vector<Case> cases = {
      {kNone, 0, idle, 6},           {kNone, 0, idle, 0},
      {kBulk, 64 << 10, idle, 6},    {kBulk, 128 << 10, idle, 6},  {kBulk, 192 << 10, idle, 6},
      {kBulk, 128 << 10, idle, 2},   {kBulk, 128 << 10, idle, 12}, {kBulk, 128 << 10, sms, 6},
      {kLines, 128 << 10, idle, 6},  {kLoads, 128 << 10, idle, 6}, {kLoads, 128 << 10, idle, 12},
  };
  for (const Case &c : cases) {
    std::vector<double> spans, own;
    for (int round = 0; round < rounds; ++round) {
      flushL2<<<sms * 4, 256>>>(flush, flushBytes / 16, sink);
      streamSlices<<<sms, kThreads>>>(weights, sliceBytes, c.how, c.ahead, c.askers,
                                      c.delayUs * 1000, marks, sink);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(host.data(), marks, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost));
      std::vector<double> each;
      for (int s = 0; s < sms; ++s)
        each.push_back(double(host[2 * s + 1] - host[2 * s]));
      std::sort(each.begin(), each.end());
      spans.push_back(double(markedSpan(host)));
      own.push_back(each[each.size() / 2]);
    }
    std::sort(spans.begin(), spans.end());
    std::sort(own.begin(), own.end());
    const double span = spans[spans.size() / 2];
    std::printf("{\"ahead\": \"%s\", \"ahead_kib_per_slice\": %zu, \"askers\": %d, "
                "\"delay_us\": %lld, \"slice_kib\": %zu, \"sms\": %d, \"span_us\": %.2f, "
                "\"span_min_us\": %.2f, \"cta_median_us\": %.2f, \"tb_per_s\": %.3f}\n",
                kAheadNames[c.how], c.ahead >> 10, c.askers, c.delayUs, sliceBytes >> 10, sms,
                span / 1e3, spans[0] / 1e3, own[own.size() / 2] / 1e3,
                double(sliceBytes) * sms / span / 1e3);
  }
  return 0;
}
