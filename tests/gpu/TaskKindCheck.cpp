// Each task kind's device function against its CPU reference, on the same
// random inputs:
//
//   mk-task-kind-check KIND (--toy | MODEL.onnx) [--max-context=N]
//                      [--num-sms=N] [--longest-attention-chunk=N]
//                      [--kv-cache=bf16] [--fuse-mlp] [--merge-in-o-proj] [--o-proj-by-head[=on|off]]
//                      [--sample=N] [--chunk-attention=tensor-cores|cuda-cores]
//                      [--weight-l2=evict-first|normal]
//
// (The SMs and the longest chunk shape the tasks: fewer SMs give a KV head
// fewer, longer attention chunks, as a long context does.)
//
// For every task of KIND in the model (with --sample=N, at most N of each
// operation, spread over its tiles) and at three positions (the first, the
// middle and the last of the context), the activation and KV arenas are
// filled with random values (made valid where the kind needs it: a token in
// the vocabulary, partials as the chunks leave them), then the task runs
// alone on the GPU (the kernel's mk_run_task, through GpuDevice::runTask) and
// on the CPU executor (CpuExecutor::runOneTask), on the artifact's bf16
// weights. Then:
//   - every element the task writes (its kind's footprint) agrees within
//     |gpu - cpu| <= kAbsolute + kRelative * |cpu| (Embed: bit for bit,
//     Argmax: the same token; AttentionChunk on tensor cores: within
//     kAbsolute + kTensorCoreRelative * the largest |cpu| of the range);
//   - every element it does not write is, on the GPU, still the input;
//   - Argmax only: sampling (core/protocol/Sampling.h) with a set of
//     settings (temperature, top-k, top-p over the candidates and over the
//     whole vocabulary, min-p, repetition penalty over a random context) and
//     fixed seeds, on the random logits as they are and sharpened (x8), picks
//     the same token on the GPU as on the CPU: bit-identical arithmetic.
// Prints one line per task and position that fails, a summary per kind, and
// exits 0 when all pass, 1 when one fails (a GPU that fails included), 77
// (ctest's skip) with the reason only when the GPU is unavailable.
#include "GpuTestModels.h"

#include "core/protocol/AttentionLayout.h"
#include "core/taskgraph/OperationLayouts.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/cpu/CpuExecutor.h"
#include "core/protocol/FixedPoint.h"
#include "runtime/format/Bf16.h"
#include "runtime/format/ScheduleBlobBuilder.h"
#include "runtime/format/WeightPacking.h"
#include "runtime/gpu/GpuDevice.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk {
namespace {

// f32 on both sides; they differ by the order of their sums (the CPU sums
// some in f64) and by the GPU's sincosf and expf.
constexpr double kAbsolute = 1e-5, kRelative = 1e-4;
// A chunk on tensor cores (codegen/device/AttentionChunkMma.cuh) takes q
// and the weights as two bf16 parts each, ~16 bits: a score's error is
// ~2^-16 of its terms' sum, and every weight, so every element of o, moves
// by the score's error. An element of o that is a small difference of
// large terms keeps that absolute error, so the limit is relative to the
// range's largest element (o's scale, which l and o share), not to the
// element's own.
constexpr double kTensorCoreRelative = 1e-3;

struct Arenas {
  std::vector<float> activations, kv;
};

// Where a range of a buffer lies in the arenas: the arena and the element
// offset of `begin`; KV cache ranges are of the slot at `position`. A bf16
// cache's elements are the halves of the arena's f32 elements, element i
// at byte 2 i (runtime/format/ScheduleBlobBuilder.h); a fixed64 buffer's
// take two f32 elements each, from `first` on (core/protocol/FixedPoint.h).
struct Placed {
  std::vector<float> *arena;
  uint64_t first, count;
  bool bf16 = false;
  bool fixed = false;

  float at(uint64_t i) const {
    if (fixed) {
      int64_t value;
      std::memcpy(&value, arena->data() + first + 2 * i, sizeof value);
      return fixedToFloat(value);
    }
    if (!bf16)
      return (*arena)[first + i];
    uint16_t half;
    std::memcpy(&half, reinterpret_cast<const char *>(arena->data()) + 2 * (first + i), 2);
    return fromBf16(half);
  }
  // The arena's f32 elements the range lies in.
  uint64_t firstWord() const { return bf16 ? first / 2 : first; }
  uint64_t endWord() const {
    return bf16 ? (first + count + 1) / 2 : fixed ? first + 2 * count : first + count;
  }
};

uint16_t *halvesOf(std::vector<float> &arena) { return reinterpret_cast<uint16_t *>(arena.data()); }

class KindCheck {
public:
  KindCheck(const Artifact &artifact, GpuDevice &device, TaskKind kind, bool chunkTensorCores)
      : artifact(artifact), graph(artifact.graph), device(device), kind(kind),
        rangeScaled(kind == TaskKind::AttentionChunk && chunkTensorCores),
        layout(layOutArenas(graph)), weights(unpackWeights(artifact.weights, artifact.weightData)),
        executor(graph, artifact.schedule, weights, cpuOptions()) {}

  // Returns the number of failures. `sample` > 0: at most that many tasks
  // of each operation, spread evenly over its tiles, the first and the last
  // among them (a big shape has thousands of tiles, each checked through
  // whole arenas).
  int run(int sample = 0) {
    int tasks = 0;
    std::vector<int64_t> positions = {0, graph.maxContext / 2, graph.maxContext - 1};
    std::vector<std::vector<uint32_t>> ofOperation(graph.operations.size());
    for (const Task &task : graph.tasks)
      if (task.kind == kind)
        ofOperation[task.op].push_back(task.id);
    for (const Task &task : graph.tasks) {
      if (task.kind != kind || !sampled(ofOperation[task.op], task.id, sample))
        continue;
      ++tasks;
      for (int64_t position : positions)
        checkTask(task, position);
    }
    std::printf("%s: %d tasks at %zu positions, %d failures, largest error %.3g (limit %.3g + "
                "%.3g %s)\n",
                describeKind(kind).name, tasks, positions.size(), failures, largestError,
                kAbsolute, rangeScaled ? kTensorCoreRelative : kRelative,
                rangeScaled ? "max |cpu| of the range" : "|cpu|");
    if (kind == TaskKind::Argmax)
      std::printf("%s: %d sampled picks compared, each the same token on both\n",
                  describeKind(kind).name, samplingChecks);
    if (tasks == 0) {
      std::printf("FAIL: the model has no %s task: the check would be void\n",
                  describeKind(kind).name);
      ++failures;
    }
    return failures;
  }

private:
  // Whether `id`, one of `tasks` (in order), is among `sample` of them spread
  // evenly, the first and the last included; all of them when sample <= 0.
  static bool sampled(const std::vector<uint32_t> &tasks, uint32_t id, int sample) {
    size_t n = tasks.size();
    if (sample <= 0 || n <= static_cast<size_t>(sample))
      return true;
    if (sample == 1)
      return id == tasks.front();
    for (int k = 0; k < sample; ++k)
      if (tasks[k * (n - 1) / (sample - 1)] == id)
        return true;
    return false;
  }

  static CpuExecutorOptions cpuOptions() {
    CpuExecutorOptions options;
    options.threaded = false;
    return options;
  }

  // The head dimension of the attention operation a KV cache is of.
  uint64_t kvHeadDim(uint32_t cache) const {
    for (const Operation &op : graph.operations)
      if (op.kind == OpKind::Attention && (op.keyCache == cache || op.valueCache == cache))
        return static_cast<uint64_t>(op.headDim);
    throw std::runtime_error("KV cache '" + graph.buffers[cache].name + "' of no attention");
  }

  Placed place(Arenas &arenas, const BufferRange &range, int64_t position) const {
    const Buffer &buffer = graph.buffers[range.buffer];
    uint64_t offset = layout.offset[range.buffer];
    if (buffer.kind == BufferKind::KVCache) {
      // A footprint's range within the position's slot is one KV head's
      // part of it (core/taskgraph/kinds/AttentionChunkKind.cpp); the
      // cache keeps each head's positions together (AttentionLayout.h).
      const uint64_t headDim = kvHeadDim(range.buffer);
      const uint64_t head = range.begin / headDim;
      if ((range.end - 1) / headDim != head)
        throw std::runtime_error("a KV range across heads: [" + std::to_string(range.begin) +
                                 ", " + std::to_string(range.end) + ") of '" + buffer.name + "'");
      const AttentionLayout kv{0, buffer.elements / graph.maxContext / headDim, headDim, 0, 0};
      const uint64_t first =
          kv.cacheEntry(position, head, graph.maxContext) + range.begin % headDim;
      if (buffer.element == BufferElement::BF16)
        return {&arenas.kv, 2 * offset + first, range.end - range.begin, true};
      return {&arenas.kv, offset + first, range.end - range.begin};
    }
    if (buffer.kind == BufferKind::Token)
      return {&arenas.activations, offset, 2}; // one int64
    if (buffer.element == BufferElement::Fixed64)
      return {&arenas.activations, offset + 2 * range.begin, range.end - range.begin, false, true};
    return {&arenas.activations, offset + range.begin, range.end - range.begin};
  }

  Arenas randomArenas(std::mt19937_64 &random, int64_t position) const {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Arenas arenas{std::vector<float>(layout.activationElements),
                  std::vector<float>(layout.kvElements)};
    for (float &value : arenas.activations)
      value = normal(random);
    for (float &value : arenas.kv)
      value = normal(random);
    for (uint32_t buffer = 0; buffer < graph.buffers.size(); ++buffer) {
      if (graph.buffers[buffer].element == BufferElement::BF16)
        for (uint64_t i = 0; i < graph.buffers[buffer].elements; ++i)
          halvesOf(arenas.kv)[2 * layout.offset[buffer] + i] = toBf16(normal(random));
      if (graph.buffers[buffer].element == BufferElement::Fixed64)
        for (uint64_t i = 0; i < graph.buffers[buffer].elements; ++i) {
          int64_t value = floatToFixed(normal(random));
          std::memcpy(arenas.activations.data() + layout.offset[buffer] + 2 * i, &value,
                      sizeof value);
        }
    }
    // Partials as the chunks leave them: a positive sum in the chunks in
    // use at `position`, the empty chunk's (o 0, max -inf, sum 0) past them.
    for (const Operation &op : graph.operations) {
      if (op.kind != OpKind::Attention)
        continue;
      const AttentionLayout attention = attentionLayout(op);
      float *partials = arenas.activations.data() + layout.offset[op.partials];
      const int64_t inUse = attentionWindowChunksInUse(position, op.window, op.chunksPerRound,
                                                       op.numChunks, op.chunkSize);
      for (int64_t head = 0; head < op.numHeads; ++head)
        for (int64_t chunk = 0; chunk < op.numChunks; ++chunk) {
          float *partial = partials + attention.partial(head, chunk);
          if (chunk < inUse) {
            float &sum = partial[attention.partialSum()];
            sum = 0.5f + std::fabs(sum);
          } else {
            std::fill(partial, partial + attention.headDim, 0.0f);
            partial[attention.partialMax()] = -INFINITY;
            partial[attention.partialSum()] = 0.0f;
          }
        }
    }
    return arenas;
  }

  void checkTask(const Task &task, int64_t position) {
    std::mt19937_64 random(task.id * 1000003ull + position);
    Arenas input = randomArenas(random, position);
    int64_t token = static_cast<int64_t>(random() % artifact.facts.vocab);

    Arenas gpu = input;
    std::string error;
    if (device.runTask(task.id, position, token, gpu.activations, gpu.kv, error) != GpuStatus::Ok) {
      fail(task, position, "the GPU failed: " + error);
      return;
    }
    Arenas cpu = input;
    int64_t cpuToken = 0;
    try {
      for (uint32_t buffer = 0; buffer < graph.buffers.size(); ++buffer)
        if (graph.buffers[buffer].kind != BufferKind::Token)
          copyToExecutor(cpu, buffer);
      cpuToken = executor.runOneTask(task.id, position, token);
      for (uint32_t buffer = 0; buffer < graph.buffers.size(); ++buffer)
        if (graph.buffers[buffer].kind != BufferKind::Token)
          copyFromExecutor(cpu, buffer);
    } catch (const std::exception &failure) {
      fail(task, position, std::string("the CPU reference failed: ") + failure.what());
      return;
    }

    std::vector<char> writtenActivations(input.activations.size()), writtenKv(input.kv.size());
    TaskFootprint footprint = deriveFootprint(graph, task);
    std::vector<BufferRange> outputs = footprint.writes;
    outputs.insert(outputs.end(), footprint.accumulates.begin(), footprint.accumulates.end());
    for (const BufferRange &range : outputs) {
      if (graph.buffers[range.buffer].kind == BufferKind::Token) {
        int64_t gpuToken;
        Placed slot = place(gpu, range, position);
        std::memcpy(&gpuToken, slot.arena->data() + slot.first, sizeof gpuToken);
        if (gpuToken != cpuToken)
          fail(task, position, "token " + std::to_string(gpuToken) + " on the GPU, " +
                                   std::to_string(cpuToken) + " on the CPU");
        markWritten(writtenActivations, slot);
        continue;
      }
      Placed onGpu = place(gpu, range, position), onCpu = place(cpu, range, position);
      markWritten(onGpu.arena == &gpu.kv ? writtenKv : writtenActivations, onGpu);
      compareWritten(task, position, range, onGpu, onCpu);
    }
    compareUnwritten(task, position, "activation", input.activations, gpu.activations,
                     writtenActivations);
    compareUnwritten(task, position, "KV", input.kv, gpu.kv, writtenKv);
    if (kind == TaskKind::Argmax) {
      checkSampling(task, position, token, input, random);
      Arenas sharp = input;
      const Operation &op = graph.operations[task.op];
      float *logits = sharp.activations.data() + layout.offset[op.input];
      for (uint64_t i = 0; i < op.inputLength; ++i)
        logits[i] *= 8.0f;
      checkSampling(task, position, token, sharp, random);
    }
  }

  // The same token on both sides for every setting and seed.
  void checkSampling(const Task &task, int64_t position, int64_t token, const Arenas &input,
                     std::mt19937_64 &random) {
    std::vector<int64_t> context(position + 1);
    for (int64_t &t : context) // repeats on purpose: each is penalized once
      t = static_cast<int64_t>(random() % std::min<int64_t>(artifact.facts.vocab, 64));
    std::vector<MkSamplingSettings> settings;
    for (uint64_t seed : {1ull, 2ull, 12345ull, 0xdeadbeefull}) {
      settings.push_back(mk_sampling_settings(1.0f, 0, 1.0f, 0.0f, 1.0f, seed));
      settings.push_back(mk_sampling_settings(0.7f, 40, 1.0f, 0.0f, 1.0f, seed));
      settings.push_back(mk_sampling_settings(1.0f, 1024, 1.0f, 0.0f, 1.0f, seed));
      settings.push_back(mk_sampling_settings(1.0f, 0, 0.9f, 0.0f, 1.0f, seed));   // whole-vocabulary top-p
      settings.push_back(mk_sampling_settings(1.3f, 50, 0.8f, 0.0f, 1.0f, seed));  // top-p after top-k
      settings.push_back(mk_sampling_settings(1.0f, 0, 1.0f, 0.05f, 1.0f, seed));  // min-p alone
      settings.push_back(mk_sampling_settings(0.9f, 20, 0.95f, 0.1f, 1.3f, seed)); // everything
      settings.push_back(mk_sampling_settings(0.0f, 0, 1.0f, 0.0f, 1.7f, seed));   // penalized greedy
    }
    for (const MkSamplingSettings &s : settings) {
      Arenas gpu = input;
      std::string error;
      if (device.runTask(task.id, position, token, gpu.activations, gpu.kv, error, s, context) !=
          GpuStatus::Ok) {
        fail(task, position, "the GPU failed sampling: " + error);
        return;
      }
      int64_t cpuToken = 0, gpuToken = 0;
      try {
        for (uint32_t buffer = 0; buffer < graph.buffers.size(); ++buffer)
          if (graph.buffers[buffer].kind != BufferKind::Token)
            copyToExecutor(input, buffer);
        cpuToken = executor.runOneTask(task.id, position, token, s, context);
      } catch (const std::exception &failure) {
        fail(task, position, std::string("the CPU reference failed sampling: ") + failure.what());
        return;
      }
      std::memcpy(&gpuToken, gpu.activations.data() + layout.offset[graph.tokenBuffer],
                  sizeof gpuToken);
      ++samplingChecks;
      if (gpuToken != cpuToken)
        fail(task, position,
             "sampled token " + std::to_string(gpuToken) + " on the GPU, " +
                 std::to_string(cpuToken) + " on the CPU (temperature " +
                 std::to_string(s.temperature) + ", top_k " + std::to_string(s.topK) +
                 ", top_p " + std::to_string(s.topP) + ", min_p " + std::to_string(s.minP) +
                 ", repetition_penalty " + std::to_string(s.repetitionPenalty) + ", seed " +
                 std::to_string(s.seed) + ")");
    }
  }

  // The executor keeps every buffer in f32, a bf16 cache's values widened,
  // but a fixed64 buffer's bytes as the arena holds them.
  void copyToExecutor(const Arenas &arenas, uint32_t buffer) {
    std::span<float> values = executor.bufferValues(buffer);
    const std::vector<float> &arena =
        graph.buffers[buffer].kind == BufferKind::KVCache ? arenas.kv : arenas.activations;
    if (graph.buffers[buffer].element == BufferElement::BF16) {
      const uint16_t *halves = reinterpret_cast<const uint16_t *>(arena.data());
      for (uint64_t i = 0; i < values.size(); ++i)
        values[i] = fromBf16(halves[2 * layout.offset[buffer] + i]);
      return;
    }
    std::memcpy(values.data(), arena.data() + layout.offset[buffer], values.size_bytes());
  }

  void copyFromExecutor(Arenas &arenas, uint32_t buffer) {
    std::span<float> values = executor.bufferValues(buffer);
    std::vector<float> &arena =
        graph.buffers[buffer].kind == BufferKind::KVCache ? arenas.kv : arenas.activations;
    if (graph.buffers[buffer].element == BufferElement::BF16) {
      for (uint64_t i = 0; i < values.size(); ++i)
        halvesOf(arena)[2 * layout.offset[buffer] + i] = toBf16(values[i]);
      return;
    }
    std::memcpy(arena.data() + layout.offset[buffer], values.data(), values.size_bytes());
  }

  static void markWritten(std::vector<char> &written, const Placed &placed) {
    std::fill(written.begin() + placed.firstWord(), written.begin() + placed.endWord(), 1);
  }

  void compareWritten(const Task &task, int64_t position, const BufferRange &range,
                      const Placed &gpu, const Placed &cpu) {
    bool exact = kind == TaskKind::Embed;
    double rangeScale = 0;
    for (uint64_t i = 0; rangeScaled && i < cpu.count; ++i)
      if (std::isfinite(cpu.at(i)))
        rangeScale = std::max(rangeScale, std::fabs(double(cpu.at(i))));
    for (uint64_t i = 0; i < gpu.count; ++i) {
      float a = gpu.at(i), b = cpu.at(i);
      bool bothInfinite = std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0);
      double difference = bothInfinite ? 0.0 : std::fabs(double(a) - double(b));
      if (!bothInfinite && std::isfinite(difference))
        largestError = std::max(largestError, difference);
      double limit = rangeScaled ? kAbsolute + kTensorCoreRelative * rangeScale
                                 : kAbsolute + kRelative * std::fabs(double(b));
      bool agrees = exact ? std::memcmp(&a, &b, sizeof a) == 0 : difference <= limit;
      if (!agrees) {
        fail(task, position,
             "element " + std::to_string(range.begin + i) + " of " +
                 describeRange(graph, range) + ": " + std::to_string(a) + " on the GPU, " +
                 std::to_string(b) + " on the CPU");
        return;
      }
    }
  }

  void compareUnwritten(const Task &task, int64_t position, const char *arenaName,
                        const std::vector<float> &before, const std::vector<float> &after,
                        const std::vector<char> &written) {
    for (size_t i = 0; i < before.size(); ++i)
      if (!written[i] && std::memcmp(&before[i], &after[i], sizeof(float)) != 0) {
        fail(task, position,
             std::string("wrote element ") + std::to_string(i) + " of the " + arenaName +
                 " arena, outside its footprint");
        return;
      }
  }

  void fail(const Task &task, int64_t position, const std::string &what) {
    std::printf("FAIL: %s at position %lld: %s\n", describeTask(graph, task.id).c_str(),
                static_cast<long long>(position), what.c_str());
    ++failures;
  }

  const Artifact &artifact;
  const TaskGraph &graph;
  GpuDevice &device;
  TaskKind kind;
  bool rangeScaled; // the limit scales with the range's largest element
  ArenaLayout layout;
  WeightTable weights;
  CpuExecutor executor;
  int failures = 0;
  int samplingChecks = 0;
  double largestError = 0;
};

int usage() {
  std::printf("usage: mk-task-kind-check KIND (--toy | MODEL.onnx) [--max-context=N]\n"
              "                          [--num-sms=N] [--longest-attention-chunk=N]\n"
              "                          [--kv-cache=bf16] [--fuse-mlp] [--merge-in-o-proj] [--o-proj-by-head[=on|off]]\n"
              "                          [--sample=N] [--chunk-attention=tensor-cores|cuda-cores]\n"
              "                          [--weight-l2=evict-first|normal]\n"
              "KIND: one of");
  for (size_t kind = 0; kind < kNumTaskKinds; ++kind)
    std::printf(" %s", describeKind(static_cast<TaskKind>(kind)).name);
  std::printf("\n");
  return 1;
}

} // namespace
} // namespace mk

int main(int argc, char **argv) {
  using namespace mk;
  if (argc < 3)
    return usage();
  std::string kindName = argv[1], path = argv[2];
  int64_t maxContext = 64;
  TargetDescription target;
  KernelOptions kernelOptions;
  int sample = 0;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    if (takeModelFlag(arg, maxContext, target))
      continue;
    if (arg.rfind("--num-sms=", 0) == 0)
      target.numSms = static_cast<uint32_t>(std::stoul(arg.substr(10)));
    else if (arg.rfind("--longest-attention-chunk=", 0) == 0)
      target.longestAttentionChunk = std::stoull(arg.substr(26));
    else if (arg == "--fuse-mlp")
      target.fuseMlp = true;
    else if (arg == "--chunk-attention=tensor-cores" || arg == "--chunk-attention=cuda-cores")
      kernelOptions.chunkTensorCores = arg == "--chunk-attention=tensor-cores";
    else if (arg == "--weight-l2=evict-first" || arg == "--weight-l2=normal")
      kernelOptions.weightsEvictFirst = arg == "--weight-l2=evict-first";
    else if (arg.rfind("--sample=", 0) == 0)
      sample = std::stoi(arg.substr(9));
    else
      return usage();
  }
  std::optional<TaskKind> kind;
  for (size_t k = 0; k < kNumTaskKinds; ++k)
    if (kindName == describeKind(static_cast<TaskKind>(k)).name)
      kind = static_cast<TaskKind>(k);
  if (!kind)
    return usage();

  std::unique_ptr<GpuDevice> device = openDeviceOrSkip();
  if (!device)
    return kSkipExit;
  std::optional<Model> model = loadModel(path, maxContext, target);
  if (!model)
    return 1;
  std::unique_ptr<BuiltArtifact> built = compile(*model, {}, kernelOptions);
  if (!built)
    return 1;
  if (int loaded = loadOnDevice(*device, built->artifact); loaded != 0)
    return loaded;
  std::printf("%s on %s\n", path.c_str(), device->describe().c_str());
  try {
    return KindCheck(built->artifact, *device, *kind, kernelOptions.chunkTensorCores).run(sample) == 0 ? 0 : 1;
  } catch (const std::exception &failure) {
    std::printf("FAIL: %s\n", failure.what());
    return 1;
  }
}
