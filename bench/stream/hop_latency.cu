// What one dependent phase costs a persistent kernel when it streams almost
// nothing: the floor under a small model's layer (bench/NOTES.md, the fixed
// cost). One CTA per SM of 512 threads, as the megakernel. Each phase every
// CTA waits for the whole previous phase, reads its vector of N floats (the
// next gemv's input), makes its slice of the next vector (a warp a row, a
// dot over the input with weights made from the index, so no HBM traffic)
// and publishes it. Four ways to publish; what `flagged` and `fenced` save
// against `event` is what a change of the event protocol could gain:
//
//   event     as codegen/device/Events.cuh: the slice stored, a barrier, one
//             thread's red.release.gpu on a counter; the waiter's thread 0
//             polls with ld.acquire.gpu (64 spins, then __nanosleep up to
//             64 ns), a barrier, then every thread loads the input.
//   relaxed   the same with red.relaxed.gpu: no release, so not correct;
//             timed only to show what the release's wait for the stores
//             costs.
//   flagged   every value stored with its phase in one 64-bit word
//             (st.relaxed.gpu.b64): the waiter's threads poll the input
//             words themselves until each carries the phase, so the poll and
//             the input load are one round trip and no counter or release is
//             needed (NCCL's LL protocol).
//   fenced    flagged, with the fences that make it correct by the PTX
//             memory model rather than by the hardware's habits: a
//             fence.acq_rel.gpu before each stamped store and after each
//             thread's polls (so what the producer wrote before is visible,
//             and this SM's L1 holds nothing stale).
//
//   hop_latency [PHASES=2000] [REPEATS=5]
// prints one JSON object per mode and input size: the best and median
// microseconds a phase over REPEATS launches, and CTA 0's first input
// value after the last phase (every mode computes the same bits, which the
// program checks: it exits 1 when a correct mode's value differs from
// event's; relaxed's is only reported).
#define PROBE_NAME "hop_latency"
#include "Probe.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int kThreads = 512, kWarps = kThreads / 32;
constexpr int kMaxInput = 8192;
enum Mode { kEvent = 0, kRelaxed = 1, kFlagged = 2, kFenced = 3 };
const char *const kModeNames[] = {"event", "relaxed", "flagged", "fenced"};

__device__ __forceinline__ unsigned loadAcquire(const unsigned *address) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void addRelease(unsigned *address) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(address) : "memory");
}
__device__ __forceinline__ void addRelaxed(unsigned *address) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(address) : "memory");
}
__device__ __forceinline__ unsigned long long loadWord(const unsigned long long *address) {
  unsigned long long value;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void storeWord(unsigned long long *address, unsigned long long value) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}
__device__ __forceinline__ void fenceAcquireRelease() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
// The weight of input j in output row i: cheap, not constant-folded.
__device__ __forceinline__ float weightOf(int row, int j) {
  return ((row * 131 + j * 29) & 255) * (1.0f / 4096.0f) - 0.03f;
}

// plain[2][n] for event/relaxed, flagged[2][n] for flagged; counter; times.
__global__ void __launch_bounds__(kThreads, 1)
    phases(int mode, int n, int count, float *plain, unsigned long long *flagged,
           unsigned *counter, unsigned long long *elapsed, float *sink) {
  __shared__ float x[kMaxInput];
  const int ctas = gridDim.x;
  const int rowsPerCta = (n + ctas - 1) / ctas;
  const int first = blockIdx.x * rowsPerCta, last = min(n, first + rowsPerCta);
  const bool stamped = mode == kFlagged || mode == kFenced;
  unsigned long long started = globalTimer();
  for (int phase = 1; phase <= count; ++phase) {
    const int in = (phase - 1) % 2, out = phase % 2;
    // Wait, and load the input into shared memory.
    if (stamped) {
      for (int j = threadIdx.x; j < n; j += kThreads) {
        unsigned long long word;
        do
          word = loadWord(flagged + in * n + j);
        while (static_cast<unsigned>(word >> 32) != static_cast<unsigned>(phase - 1));
        x[j] = __uint_as_float(static_cast<unsigned>(word));
      }
      if (mode == kFenced)
        fenceAcquireRelease();
      __syncthreads();
    } else {
      if (threadIdx.x == 0) {
        const unsigned target = static_cast<unsigned>(phase - 1) * ctas;
        for (unsigned attempt = 1, pause = 0; loadAcquire(counter) < target; ++attempt)
          if (attempt > 64) {
            pause = pause == 0 ? 32 : min(2 * pause, 64u);
            __nanosleep(pause);
          }
      }
      __syncthreads();
      for (int j = threadIdx.x; j < n; j += kThreads)
        x[j] = __ldcg(plain + in * n + j);
      __syncthreads();
    }
    // Compute and store the slice: a warp a row.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int row = first + warp; row < last; row += kWarps) {
      float sum = 0.0f;
      for (int j = lane; j < n; j += 32)
        sum += x[j] * weightOf(row, j);
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      // Bounded and row-dependent, so that the last value is a real check
      // of every mode's data (a plain dot product vanishes or overflows
      // over thousands of phases).
      sum = tanhf(sum + ((row * 37) & 15) * (1.0f / 16.0f) - 0.5f);
      if (lane == 0) {
        if (mode == kFenced)
          fenceAcquireRelease();
        if (stamped)
          storeWord(flagged + out * n + row,
                    (static_cast<unsigned long long>(phase) << 32) | __float_as_uint(sum));
        else
          plain[out * n + row] = sum;
      }
    }
    if (!stamped) {
      __syncthreads(); // every store before the one release
      if (threadIdx.x == 0)
        mode == kEvent ? addRelease(counter) : addRelaxed(counter);
    } else {
      __syncthreads(); // x is read by this phase before the next overwrites it
    }
  }
  if (threadIdx.x == 0) {
    elapsed[blockIdx.x] = globalTimer() - started;
    sink[blockIdx.x] = x[0];
  }
}

int main(int argc, char **argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  if (count < 1 || repeats < 1) {
    std::fprintf(stderr, "hop_latency: PHASES and REPEATS must be positive integers\n");
    return 2;
  }
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float *plain, *sink;
  unsigned long long *flagged, *elapsed;
  unsigned *counter;
  CHECK(cudaMalloc(&plain, 2 * kMaxInput * sizeof(float)));
  CHECK(cudaMalloc(&flagged, 2 * kMaxInput * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CHECK(cudaMalloc(&elapsed, sms * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&sink, sms * sizeof(float)));
  std::vector<unsigned long long> times(sms);
  std::vector<unsigned> expected(kMaxInput + 1, 0); // event's bits of x0, by input size
  bool differs = false;
  for (int mode : {kEvent, kRelaxed, kFlagged, kFenced})
    for (int n : {256, 576, 2048, 8192}) {
      std::vector<double> perPhase;
      float last = 0.0f; // CTA 0's x[0] after the last phase: the same in every mode
      for (int r = 0; r < repeats; ++r) {
        // Phase 0's input: flag 0 and value 1.0, the counter at 0.
        std::vector<unsigned long long> words(2 * n, 0x3f800000ull);
        std::vector<float> ones(2 * n, 1.0f);
        CHECK(cudaMemcpy(flagged, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(plain, ones.data(), ones.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
        phases<<<sms, kThreads>>>(mode, n, count, plain, flagged, counter, elapsed, sink);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(times.data(), elapsed, sms * 8, cudaMemcpyDeviceToHost));
        perPhase.push_back(*std::max_element(times.begin(), times.end()) / 1e3 / count);
        CHECK(cudaMemcpy(&last, sink, sizeof(float), cudaMemcpyDeviceToHost));
        unsigned bits;
        std::memcpy(&bits, &last, sizeof bits);
        if (mode == kEvent && r == 0)
          expected[n] = bits;
        else if (bits != expected[n]) {
          float eventValue;
          std::memcpy(&eventValue, &expected[n], sizeof eventValue);
          std::fprintf(stderr, "hop_latency: %s at %d floats computed x0 = %.9g, event %.9g\n",
                       kModeNames[mode], n, last, eventValue);
          differs = differs || mode != kRelaxed; // relaxed may: it has no release
        }
      }
      std::sort(perPhase.begin(), perPhase.end());
      std::printf("{\"mode\": \"%s\", \"input_floats\": %d, \"ctas\": %d, \"phases\": %d, "
                  "\"best_us_a_phase\": %.3f, \"median_us_a_phase\": %.3f, \"last_x0\": %.9g}\n",
                  kModeNames[mode], n, sms, count, perPhase.front(),
                  perPhase[perPhase.size() / 2], last);
    }
  return differs ? 1 : 0;
}
