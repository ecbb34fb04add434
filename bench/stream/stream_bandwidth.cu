// The HBM streaming rate this GPU reaches, measured the way a persistent
// kernel streams weights: one CTA per SM of 1024 threads, each keeping
// kInFlight 16-byte non-caching loads outstanding. The bench divides a
// model's bytes per token by this rate to get the floor it compares mkc with.
//
//   stream_bandwidth [GIB=2.5] [REPEATS=20]
// prints one JSON object: the best and median rate of each in-flight depth.
#define PROBE_NAME "stream_bandwidth"
#include "Probe.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Each thread reads kInFlight chunks a grid-stride apart before combining
// them, so that many loads are outstanding; the XOR keeps them live.
template <int kInFlight>
__global__ void __launch_bounds__(1024, 1) stream(const uint4 *data, size_t chunks, unsigned *sink) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned folded = 0;
  for (; i + (kInFlight - 1) * stride < chunks; i += kInFlight * stride) {
    uint4 v[kInFlight];
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      v[k] = loadStreaming(data + i + k * stride);
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      folded ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  for (; i < chunks; i += stride) {
    uint4 v = loadStreaming(data + i);
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (folded == 0x9e3779b9u) // practically never: only defeats dead-code elimination
    *sink = folded;
}

template <int kInFlight>
void measure(const uint4 *data, size_t bytes, int repeats, int sms, unsigned *sink, bool last) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> rates;
  for (int r = 0; r < repeats + 2; ++r) {
    CHECK(cudaEventRecord(start));
    stream<kInFlight><<<sms, 1024>>>(data, bytes / 16, sink);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= 2) // the first two warm up clocks and TLBs
      rates.push_back(bytes / (ms * 1e-3) / 1e12);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("    \"%d\": {\"best_tbps\": %.4f, \"median_tbps\": %.4f}%s\n", kInFlight,
              rates.back(), rates[rates.size() / 2], last ? "" : ",");
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
}

int main(int argc, char **argv) {
  double gib = argc > 1 ? std::atof(argv[1]) : 2.5;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  size_t bytes = size_t(gib * (1ull << 30)) / 16 * 16;
  if (bytes == 0 || repeats < 1) {
    std::fprintf(stderr, "usage: stream_bandwidth [GIB>0] [REPEATS>=1]\n");
    return 1;
  }
  cudaDeviceProp properties;
  CHECK(cudaGetDeviceProperties(&properties, 0));
  uint4 *data;
  unsigned *sink;
  CHECK(cudaMalloc(&data, bytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMemset(data, 0x5a, bytes));
  int sms = properties.multiProcessorCount;
  std::printf("{\n  \"gpu\": \"%s\", \"sms\": %d, \"bytes\": %zu, \"repeats\": %d,\n",
              properties.name, sms, bytes, repeats);
  std::printf("  \"loads_in_flight\": {\n");
  measure<4>(data, bytes, repeats, sms, sink, false);
  measure<8>(data, bytes, repeats, sms, sink, true);
  std::printf("  }\n}\n");
  CHECK(cudaFree(data));
  CHECK(cudaFree(sink));
  return 0;
}
