// Does a task's first poll of its event wait behind the weights the SM has
// just asked for? A gemv task issues its first batch of weights (up to tens
// of kilobytes an SM) before it waits, and its controller then polls a
// counter in L2; on the 1B shape the time from a task's start to its wait
// is 2-3 us where the instructions account for ~1 (bench/NOTES.md, item
// 24). This probe times one L2 load of a counter issued by thread 0 of each
// SM right after (or right before) every thread of the SM issues LOADS
// 16-byte non-caching loads of fresh weights from HBM, as the kernel's
// first batch does (132 SMs at once, one CTA of 512 threads each):
//
//   acquire   ld.acquire.gpu, the kernel's poll (codegen/device/Events.cuh)
//   relaxed   ld.relaxed.gpu
//   plain     an ordinary ld.global of a value another SM could have
//             written (as the trace's marks read the blob's header)
//
//   poll_behind_loads [ROUNDS=200]
// prints one JSON object per poll, order and loads a thread: the median and
// 90th percentile of the poll's latency in ns (clock64 at the SM clock
// measured over the same launch) over every round and SM. If "after" grows
// with the loads in flight and "before" does not, the poll queues behind
// them, and the kernel should poll before it issues its first batch.
#define PROBE_NAME "poll_behind_loads"
#include "Probe.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kThreads = 512, kMaxLoads = 8;
enum Poll { kAcquire = 0, kRelaxed = 1, kPlain = 2 };
const char *const kPollNames[] = {"acquire", "relaxed", "plain"};

__device__ __forceinline__ unsigned poll(int kind, const unsigned *address) {
  unsigned value;
  if (kind == kAcquire)
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  else if (kind == kRelaxed)
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  else
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ long long clockAfter(unsigned value) {
  // The clock is read once `value` has arrived: the move depends on it.
  unsigned used;
  asm volatile("mov.u32 %0, %1;" : "=r"(used) : "r"(value));
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : "r"(used));
  return t;
}
// latency[round][cta] in cycles; clocks[0..1]: CTA 0's clock64 and
// globaltimer over the launch, for the SM clock.
__global__ void __launch_bounds__(kThreads, 1)
    polls(int kind, bool pollFirst, int loads, int rounds, const uint4 *weights, size_t chunks,
          const unsigned *counter, long long *latency, long long *clocks, unsigned *sink) {
  const long long clockStart = clock64();
  const unsigned long long timerStart = globalTimer();
  unsigned folded = 0;
  for (int round = 0; round < rounds; ++round) {
    __syncthreads();
    // This round's fresh weights: no SM or round reads another's.
    const size_t base =
        ((size_t(round) * gridDim.x + blockIdx.x) * kThreads * kMaxLoads) % (chunks - kThreads * kMaxLoads);
    long long started = 0;
    unsigned value = 0;
    if (pollFirst && threadIdx.x == 0) {
      started = clock64();
      value = poll(kind, counter);
    }
    uint4 v[kMaxLoads];
#pragma unroll
    for (int k = 0; k < kMaxLoads; ++k)
      if (k < loads)
        v[k] = loadStreaming(weights + base + size_t(k) * kThreads + threadIdx.x);
    if (!pollFirst && threadIdx.x == 0) {
      started = clock64();
      value = poll(kind, counter);
    }
    if (threadIdx.x == 0)
      latency[size_t(round) * gridDim.x + blockIdx.x] = clockAfter(value) - started;
#pragma unroll
    for (int k = 0; k < kMaxLoads; ++k)
      if (k < loads)
        folded ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    folded += value;
  }
  if (folded == 0x9e3779b9u) // practically never: only keeps the loads
    *sink = folded;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clocks[0] = clock64() - clockStart;
    clocks[1] = static_cast<long long>(globalTimer() - timerStart);
  }
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  if (rounds < 1) {
    std::fprintf(stderr, "poll_behind_loads: ROUNDS must be a positive integer\n");
    return 2;
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t bytes = size_t(2) << 30; // well past L2: every round's weights come from HBM
  const size_t chunks = bytes / sizeof(uint4);
  uint4 *weights;
  unsigned *counter, *sink;
  long long *latency, *clocks;
  CHECK(cudaMalloc(&weights, bytes));
  CHECK(cudaMemset(weights, 1, bytes));
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&latency, size_t(rounds) * sms * sizeof(long long)));
  CHECK(cudaMalloc(&clocks, 2 * sizeof(long long)));
  std::vector<long long> cycles(size_t(rounds) * sms);
  long long clock[2];
  for (int kind : {kAcquire, kRelaxed, kPlain})
    for (bool pollFirst : {false, true})
      for (int loads : {0, 1, 2, 4, 8}) {
        polls<<<sms, kThreads>>>(kind, pollFirst, loads, rounds, weights, chunks, counter, latency,
                                 clocks, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(cycles.data(), latency, cycles.size() * sizeof(long long),
                         cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(clock, clocks, sizeof clock, cudaMemcpyDeviceToHost));
        // The first round of each SM waits on the launch itself: left out.
        std::vector<long long> kept(cycles.begin() + sms, cycles.end());
        if (kept.empty())
          kept = cycles;
        std::sort(kept.begin(), kept.end());
        const double ghz = clock[1] > 0 ? double(clock[0]) / double(clock[1]) : 1.0;
        std::printf("{\"poll\": \"%s\", \"order\": \"%s\", \"loads_per_thread\": %d, "
                    "\"kib_in_flight_per_sm\": %d, \"sm_ghz\": %.3f, \"median_ns\": %.0f, "
                    "\"p90_ns\": %.0f}\n",
                    kPollNames[kind], pollFirst ? "before" : "after", loads,
                    loads * kThreads * 16 / 1024, ghz, kept[kept.size() / 2] / ghz,
                    kept[kept.size() * 9 / 10] / ghz);
      }
  return 0;
}
