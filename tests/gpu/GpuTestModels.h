// What the GPU checks share: a scheduled model with its weights, from an
// ONNX file, a .mlir shape (random weights) or the toy graph of
// tests/unit/ToyTaskGraph.h, and its in-memory artifact with the NVRTC
// kernel, as `mkc compile --emit=mk` would write it.
#ifndef MKC_TESTS_GPU_GPUTESTMODELS_H
#define MKC_TESTS_GPU_GPUTESTMODELS_H

#include "codegen/KernelSource.h"
#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"
#include "core/weights/WeightTable.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/gpu/GpuDevice.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mk {

struct Model {
  TaskGraph graph;
  Schedule schedule;
  WeightTable weights;
  std::vector<ScheduledGraph> rowSteps; // the batches asked for, in their order
};

// `path` "--toy" is the toy graph; otherwise compiled with `maxContext` for
// `target` (the SMs and the longest attention chunk shape the tasks; the
// toy's caches take its KV cache element too), with a step of each of
// `batches` (a row per sequence) beside decode.
// Prints why and returns nothing when the model does not compile.
std::optional<Model> loadModel(const std::string &path, int64_t maxContext,
                               const TargetDescription &target = {},
                               const std::vector<int64_t> &batches = {});

// Teacher-forced logits of the CPU executor on the artifact's bf16 weights,
// [tokens][vocab].
std::vector<float> cpuLogits(const Artifact &artifact, const std::vector<int64_t> &tokens);

// `count` token ids below `vocab`, the same for the same seed.
std::vector<int64_t> someTokens(int64_t count, int64_t vocab, uint64_t seed = 12345);

// A row of logits: its argmax and the gap to the second largest (a gap below
// a check's threshold may flip either way between two engines).
struct Row {
  size_t argmax;
  float gap;
};
Row rowFacts(const float *logits, int64_t vocab);

// The model's artifact with its kernel; prints why and returns nullptr when
// NVRTC or the artifact fails.
std::unique_ptr<BuiltArtifact> compile(const Model &model, std::vector<int64_t> eos,
                                       const KernelOptions &options = {});

// ctest's exit code for a skipped test.
constexpr int kSkipExit = 77;

// The GPU, or nullptr after printing SKIP and why (the caller exits
// kSkipExit): a machine without one skips, never fails.
std::unique_ptr<GpuDevice> openDeviceOrSkip();

// Takes the flags every check shares, --max-context=N and --kv-cache=bf16:
// true when `arg` was one of them.
bool takeModelFlag(const std::string &arg, int64_t &maxContext, TargetDescription &target);

// Loads the artifact: 0 when it is loaded; kSkipExit (printing SKIP and why)
// only when the device cannot run the file; 1 (printing FAIL) when the
// device or the file fails.
int loadOnDevice(GpuDevice &device, const Artifact &artifact);

} // namespace mk

#endif
