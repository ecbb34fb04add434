// The CUDA C++ source of one model's persistent kernel: the device library
// (codegen/device/, embedded into mkc at build time) specialized with the
// model's constants. The generated part holds the constants, one dispatcher
// that maps a task's kind and its operation's shape to an instantiation of
// the task templates, the kernel's published facts (MkKernelInfo) and the
// __global__ entry point; every loop bound inside a task is then a
// compile-time constant.
#ifndef MKC_CODEGEN_KERNELSOURCE_H
#define MKC_CODEGEN_KERNELSOURCE_H

#include "core/protocol/GemvGeometry.h"
#include "core/taskgraph/TaskGraph.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// Threads per CTA: 16 warps, enough 16-byte loads in flight per SM to
// stream weights, and 128 registers per thread at one CTA per SM. With the
// weight ring, one of the warps is its producer and 15 run the tasks.
constexpr uint32_t kMegakernelThreads = 512;
// Static shared memory kept for the interpreter's records and the
// reductions' scratch; tasks get the rest of the target's per-CTA limit.
constexpr uint32_t kStaticSharedReserve = 2048;

// Tuning of the generated kernel that does not change what it computes.
struct KernelOptions {
  // Bytes of its next task's weights each CTA asks into L2 as a task ends
  // (0: none). The sum over the SMs must leave L2 room for the weights
  // being streamed. Off by default: since each gemv copies its own first
  // weights while it waits, 64 KiB measured 5% slower on the Llama-3.2-1B
  // shape (bench/NOTES.md): the prefetch competes with the task's tail.
  uint32_t prefetchBytes = 0;
  // 16-byte weight loads each gemv lane keeps in flight (1 to 16); with the
  // weight ring, the chunks per lane of one ring slot.
  uint32_t gemvLoadsInFlight = 8;
  // When a gemv of rows long enough for one batch of loads to cover HBM's
  // latency issues its first batch (kGemvFirst*, core/protocol/
  // GemvGeometry.h; codegen/device/GemvTask.cuh). Copied into shared memory
  // while the task waits measured slower (the SM's event polls queue behind
  // its own copies: the hop into the gemv 1.9 us against 0.74), and so did
  // issuing them once the wait ends (under the input's load; +3%), against
  // loads into registers before the wait (-3 to -5% a token on the
  // Llama-3.2-1B shape against after the input, bench/NOTES.md). Shorter
  // rows keep their two stages of copies either way.
  int gemvFirstWeights = kGemvFirstBeforeWait;
  // The weight ring (codegen/device/WeightRing.cuh): a producer warp in
  // place of a consumer one streams every gemv's weights into shared memory
  // ahead of its task, through the other tasks and the waits. Only on
  // targets with bulk copies and mbarrier byte counts (sm_90 on). Off by
  // default: it measured 17% slower on the Llama-3.2-1B shape, the slots a
  // pass holds while it is summed leaving too few in flight (bench/NOTES.md).
  bool weightRing = false;
  // Weights read with L2's evict-first policy (codegen/device/Common.cuh:
  // weightCachePolicy), so that the stream of a token's weights leaves the
  // KV cache, the activations and the events in L2 for the next step. On
  // by default: -2 to -3% a token on SmolLM2, Qwen3-0.6B and 64 tiny
  // layers, the 1B shape the same, the logits the same bits
  // (bench/results/2026-12-05-h200-l2-and-chunk-mma).
  bool weightsEvictFirst = true;
  // Long attention chunks of bf16 caches (those staged through shared
  // memory) compute their scores and o on tensor cores
  // (codegen/device/AttentionChunkMma.cuh) instead of CUDA cores. On by
  // default: -11% a token on the 1B shape at 32700, -17% on Qwen3-0.6B,
  // within 2% either way at 512 (the same results).
  bool chunkTensorCores = true;
};

// "" when `options` are in range, else what is not.
std::string checkKernelOptions(const KernelOptions &options);

// The name `--gemv-first-weights` gives mode `mode` (kGemvFirst*), for the
// option's parser and its spelling below; nullptr for no mode.
const char *gemvFirstWeightsName(int mode);

// Every option as `mkc compile` spells it, defaults too, in one line: what
// the .mk's manifest records of how its kernel was built (mkc inspect).
std::string spellKernelOptions(const KernelOptions &options);

struct KernelSource {
  std::string text;           // the generated translation unit
  uint32_t threads = 0;       // per CTA: the consumers and, with a weight ring, its producer warp
  uint32_t consumerThreads = 0; // the threads that run tasks
  uint32_t sharedBytes = 0;   // dynamic shared memory per CTA: the most any task needs, then the ring
  uint32_t weightRingSlots = 0; // 0: no weight ring
  uint32_t weightRingSlotBytes = 0;
};

// An included file of the device library: its include name and text.
struct DeviceLibraryFile {
  const char *name;
  const char *text;
};

// The device library as embedded at build time: codegen/device/*.cuh and
// the ABI headers they include (runtime/format/ScheduleBlob.h,
// ControlBlock.h), under the names the sources include them by.
const std::vector<DeviceLibraryFile> &deviceLibrary();

// "" when the kernel runs the graph's step of rows: decode (one row of one
// sequence), or a batch (a row per sequence) of no Mlp operation; else why
// not. A prefill chunk's rows attend to the chunk's earlier rows, which the
// device functions do not do yet.
std::string unsupportedStepRows(const TaskGraph &graph);

// Refuses graphs the device library cannot run: not exactly one argmax,
// heads that do not split evenly over KV heads, an odd rotary dimension, or
// a task needing more shared memory than `sharedBytesPerCta` (the target's
// limit for one CTA) leaves after kStaticSharedReserve.
llvm::Expected<KernelSource> generateKernelSource(const TaskGraph &graph, const Schedule &schedule,
                                                  uint32_t sharedBytesPerCta,
                                                  const KernelOptions &options = {});

} // namespace mk

#endif
