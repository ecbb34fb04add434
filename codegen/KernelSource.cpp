#include "codegen/KernelSource.h"

#include "core/protocol/FixedPoint.h"
#include "core/protocol/GemvGeometry.h"
#include "core/protocol/SharedMemory.h"
#include "core/taskgraph/KernelVariants.h"
#include "core/taskgraph/TaskKind.h"
#include "core/taskgraph/TaskNames.h"
#include "runtime/format/ControlBlock.h"
#include "runtime/format/PrefillArgs.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace mk {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// The model's sizes, for the kernel's constants and its header comment.
struct ModelShapes {
  uint64_t hidden = 0, vocab = 0;
  size_t argmaxes = 0;
  int64_t numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
};

ModelShapes collectShapes(const TaskGraph &graph) {
  ModelShapes shapes;
  for (const Operation &op : graph.operations) {
    if (op.kind == OpKind::Embed)
      shapes.hidden = op.outputLength;
    if (op.kind == OpKind::Argmax) {
      shapes.vocab = op.inputLength;
      ++shapes.argmaxes;
    }
    if (op.kind == OpKind::Attention) {
      ++shapes.numLayers;
      shapes.numHeads = op.numHeads;
      shapes.numKvHeads = op.numKvHeads;
      shapes.headDim = op.headDim;
    }
  }
  return shapes;
}

std::string listNames(const std::vector<std::string> &names) {
  constexpr size_t kShown = 3;
  std::string text;
  for (size_t i = 0; i < std::min(names.size(), kShown); ++i)
    text += (i ? ", " : "") + names[i];
  if (names.size() > kShown)
    text += " and " + std::to_string(names.size() - kShown) + " more";
  return text;
}

// The variant's arguments as C++ template arguments.
std::string templateArguments(const KernelVariant &variant) {
  const TaskKindDescription &kind = describeKind(variant.kind);
  std::string text;
  for (size_t i = 0; i < variant.arguments.size(); ++i)
    text += (i ? ", " : "") + spellVariantArgument(kind.variantParameters[i], variant.arguments[i]);
  return text;
}

// Floats of dynamic shared memory the kernel needs: the most any variant
// needs, by its kind's description.
uint64_t sharedFloats(const KernelVariants &variants) {
  uint64_t floats = 0;
  for (const KernelVariant &variant : variants.variants)
    floats = std::max(floats, describeKind(variant.kind).sharedFloats(variant.arguments));
  return floats;
}

// 16-byte slots per thread for a gemv's weights in shared memory (codegen/
// device/GemvTask.cuh): two stages of a batch for rows too short for one
// batch to hold the loads in flight (copied while the one before is
// summed), one batch for the other rows when their first is copied while
// they wait; the most any gemv uses, where the largest gemv input leaves
// room for it within `limitBytes`, else one batch, else none. (Rows whose
// batch holds the loads in flight, first loaded into registers, use none.)
uint32_t gemvEarlySlots(const KernelVariants &variants, uint64_t limitBytes,
                        const KernelOptions &options) {
  uint64_t twoStages = 0, oneStage = 0;
  for (const KernelVariant &variant : variants.variants) {
    if (variant.kind != TaskKind::Gemv || variant.arguments[0] % 8 != 0)
      continue;
    const int loads = static_cast<int>(options.gemvLoadsInFlight);
    GemvGeometry g = gemvGeometry(static_cast<int>(variant.arguments[0]),
                                  MK_EPILOGUE_GATED(variant.arguments[1]) ? 2 : 1,
                                  kMegakernelThreads, loads);
    const uint64_t batch = static_cast<uint64_t>(gemvBatchChunks(g));
    const bool shortRows = gemvShortRows(g, loads);
    if (shortRows || options.gemvFirstWeights == kGemvFirstCopied) {
      twoStages = std::max(twoStages, (shortRows ? 2 : 1) * batch);
      oneStage = std::max(oneStage, batch);
    }
  }
  for (uint64_t slots : {twoStages, oneStage}) {
    if (slots == 0)
      continue;
    bool fits = true;
    for (const KernelVariant &variant : variants.variants)
      if (variant.kind == TaskKind::Gemv &&
          gemvSharedBytesWithEarlyWeights(variant.arguments[0], kMegakernelThreads, slots) >
              limitBytes)
        fits = false;
    if (fits)
      return static_cast<uint32_t>(slots);
  }
  return 0;
}

// The weight ring's slot: one warp's pass of the longest gemv rows
// (core/protocol/GemvGeometry.h), at least 16 KiB.
uint64_t weightRingSlotBytes(const KernelVariants &variants, uint32_t consumers) {
  uint64_t longest = 0;
  for (const KernelVariant &variant : variants.variants)
    if (variant.kind == TaskKind::Gemv) {
      int rows = MK_EPILOGUE_GATED(variant.arguments[1]) ? 2 : 1;
      longest = std::max<uint64_t>(longest, gemvWarpPassBytes(gemvGeometry(
                                      static_cast<int>(variant.arguments[0]), rows,
                                      static_cast<int>(consumers), 1)));
    }
  return gemvRingSlotBytes(longest);
}

// The ring's bytes: three 8-byte words per slot (two mbarriers and the
// owner) in a 128-byte aligned block, then the slots
// (codegen/device/WeightRing.cuh).
uint64_t weightRingBytes(uint64_t slots, uint64_t slotBytes) {
  return (slots * 24 + 127) / 128 * 128 + slots * slotBytes;
}

// The slots that fit `ringBytes`, or 0 where fewer than two do (the ring
// is then off).
uint32_t weightRingSlots(uint64_t ringBytes, uint64_t slotBytes) {
  uint64_t slots = ringBytes / slotBytes;
  while (slots > 0 && weightRingBytes(slots, slotBytes) > ringBytes)
    --slots;
  return slots >= 2 ? static_cast<uint32_t>(slots) : 0;
}

void emitConstants(std::ostream &os, const TaskGraph &graph, const Schedule &schedule,
                   const ModelShapes &shapes, const KernelVariants &variants,
                   const KernelSource &source, uint32_t sharedBytesPerCta,
                   uint32_t earlySlots, uint32_t taskBytes) {
  os << "constexpr int kThreads = " << source.consumerThreads << "; // the consumers\n"
     << "constexpr int kBlockThreads = " << source.threads
     << "; // with the weight ring's producer warp, if any\n"
     << "constexpr int kSharedBytes = " << source.sharedBytes << "; // dynamic, per CTA\n"
     << "constexpr int kTaskSharedBytes = " << taskBytes << "; // the tasks' part of it\n"
     << "constexpr int kWeightRingSlots = " << source.weightRingSlots
     << "; // after the tasks' part: codegen/device/WeightRing.cuh\n"
     << "constexpr int kWeightRingSlotBytes = " << source.weightRingSlotBytes << ";\n"
     << "constexpr int kGemvEarlySlots = " << earlySlots
     << "; // 16-byte units per thread of a gemv's weights in shared memory\n"
     << "constexpr int kNumSms = " << schedule.numSms << ";\n"
     << "constexpr int kNumTasks = " << graph.tasks.size() << ";\n"
     << "constexpr int kNumEvents = " << graph.events.size() << ";\n"
     << "constexpr int kNumOperations = " << graph.operations.size() << ";\n"
     << "constexpr bool kInlineTasks = "
     << (std::any_of(graph.tasks.begin(), graph.tasks.end(),
                     [](const Task &task) { return task.runsInline; })
             ? "true"
             : "false")
     << "; // some task runs where its wait completes (Task::runsInline)\n"
     << "constexpr int kNumVariants = " << variants.variants.size() << ";\n"
     << "constexpr long long kMaxContext = " << graph.maxContext << ";\n"
     << "constexpr int kStepRows = " << graph.rows << "; // of the step: a batch's sequences\n"
     << "constexpr int kSequences = " << graph.sequences << ";\n"
     << "constexpr int kRanks = mk::gpu::kRanks; // of tensor parallelism: MK_RANKS\n"
     << "constexpr int kHidden = " << shapes.hidden << ";\n"
     << "constexpr int kVocab = " << shapes.vocab << ";\n\n"
     << "static_assert(kSharedBytes + " << kStaticSharedReserve << " <= " << sharedBytesPerCta
     << ", \"one CTA's shared memory on the target\");\n\n";
}

// `name`: a switch over the kernel variants `included` marks, by the number
// the blob gives each task; each instantiation's shared memory asserted
// against the kernel's.
void emitSwitch(std::ostream &os, const KernelVariants &variants,
                const std::vector<bool> &included, const char *name) {
  os << "  template <class AwaitInputs>\n"
     << "  __device__ static void " << name << "(\n"
     << "      const mk::gpu::TaskContext &context, const MkTaskRecord &task,\n"
     << "      const MkOperationRecord &op, const AwaitInputs &awaitInputs) {\n"
     << "    using namespace mk::gpu;\n"
     << "    switch (task.variant) {\n";
  for (size_t number = 0; number < variants.variants.size(); ++number) {
    if (!included[number])
      continue;
    const KernelVariant &variant = variants.variants[number];
    const TaskKindDescription &kind = describeKind(variant.kind);
    std::string arguments = templateArguments(variant);
    os << "    case " << number << ": // " << describeVariant(variant.kind, variant.arguments)
       << ": " << listNames(variant.operations) << "\n"
       << "      static_assert(" << kind.sharedFloatsFunction << "(" << arguments
       << ") * sizeof(float) <= kTaskSharedBytes, \"" << kind.name << "'s shared memory\");\n"
       << "      return " << kind.deviceFunction << "<" << arguments << ", " << kind.kernelArguments
       << ">(context, task, op, awaitInputs);\n";
  }
  os << "    }\n"
     << "    if (threadIdx.x == 0)\n"
     << "      raiseError(context, MK_ERROR_UNKNOWN_VARIANT, task.variant);\n"
     << "  }\n";
}

// The dispatcher: `run` over every variant, and `runInline` over those of
// inline tasks only (Task::runsInline), so that the interpreter's second
// call site adds no other task body to the kernel's registers.
void emitDispatcher(std::ostream &os, const TaskGraph &graph, const KernelVariants &variants,
                    const KernelOptions &options) {
  os << "struct Tasks {\n"
     << "  static constexpr unsigned long long kPrefetchBytes = " << options.prefetchBytes << ";\n"
     << "  static constexpr unsigned long long kTaskSharedBytes = model::kTaskSharedBytes;\n"
     << "  static constexpr int kWeightRingSlots = model::kWeightRingSlots;\n"
     << "  static constexpr int kWeightRingSlotBytes = model::kWeightRingSlotBytes;\n"
     << "  static constexpr unsigned long long kWeightRingOffset = model::kTaskSharedBytes;\n"
     << "  static constexpr int kGemvLoadsInFlight = " << options.gemvLoadsInFlight << ";\n"
     << "  static constexpr int kGemvEarlySlots = model::kGemvEarlySlots;\n"
     << "  static constexpr int kGemvFirstWeights = " << options.gemvFirstWeights << ";\n"
     << "  static constexpr bool kInlineTasks = model::kInlineTasks;\n"
     << "  static constexpr bool kHeadProjections = "
     << (std::any_of(graph.tasks.begin(), graph.tasks.end(),
                     [](const Task &task) { return task.kind == TaskKind::HeadProjection; })
             ? "true"
             : "false")
     << "; // an attention chunk asks L2 for the next tile's weights (Prefetch.cuh)\n"
     << "  static constexpr int kStepRows = model::kStepRows;\n"
     << "  static constexpr int kStaticSharedReserve = " << kStaticSharedReserve << ";\n\n";
  std::vector<bool> every(variants.variants.size(), true), inlined(variants.variants.size(), false);
  for (const Task &task : graph.tasks)
    if (task.runsInline)
      inlined[variants.ofTask[task.id]] = true;
  emitSwitch(os, variants, every, "run");
  emitSwitch(os, variants, inlined, "runInline");
  os << "};\n";
}

// The variants as the kernel publishes them (MkKernelVariant).
void emitVariantTable(std::ostream &os, const KernelVariants &variants) {
  os << "extern \"C\" __constant__ MkKernelVariant mk_kernel_variants[" << variants.variants.size()
     << "] = {\n";
  for (const KernelVariant &variant : variants.variants) {
    os << "    {" << static_cast<int>(variant.kind) << ", " << variant.arguments.size() << ", {";
    for (size_t i = 0; i < variant.arguments.size(); ++i)
      os << (i ? ", " : "") << variant.arguments[i] << "ll";
    os << "}},\n";
  }
  os << "};\n\n";
}

llvm::Error checkSupported(const TaskGraph &graph, const ModelShapes &shapes,
                           const KernelVariants &variants) {
  if (shapes.argmaxes != 1)
    return error("the graph has " + llvm::Twine(shapes.argmaxes) +
                 " argmax operations; the kernel runs exactly one");
  if (graph.ranks < 1 || graph.ranks > MK_MAX_RANKS)
    return error("the graph is rank " + llvm::Twine(graph.rank) + " of " + llvm::Twine(graph.ranks) +
                 " of tensor parallelism; the kernel runs 1 to " + llvm::Twine(MK_MAX_RANKS) +
                 " ranks");
  if (graph.ranks > 1 && graph.rows != 1)
    return error("the graph is a tensor-parallel step of " + llvm::Twine(graph.rows) +
                 " rows; the kernel runs a tensor-parallel model one row a step");
  // Prefill chunks run on the CPU executor so far (docs/m-token-steps.md).
  if (std::string problem = unsupportedStepRows(graph); !problem.empty())
    return error(problem);
  for (const Operation &op : graph.operations) {
    if (op.kind == OpKind::Attention && (op.numKvHeads <= 0 || op.numHeads % op.numKvHeads != 0))
      return error("attention '" + op.name + "' has " + llvm::Twine(op.numHeads) +
                   " heads over " + llvm::Twine(op.numKvHeads) + " KV heads");
    if (op.kind == OpKind::Attention && op.rotaryDim % 2 != 0)
      return error("attention '" + op.name + "' rotates an odd " + llvm::Twine(op.rotaryDim) +
                   " dimensions");
  }
  for (const KernelVariant &variant : variants.variants)
    if (variant.arguments.size() > MK_MAX_VARIANT_ARGUMENTS)
      return error(describeVariant(variant.kind, variant.arguments) + " has more than " +
                   llvm::Twine(MK_MAX_VARIANT_ARGUMENTS) + " variant arguments");
  return llvm::Error::success();
}

// The attention shapes the prompt kernels take: head dims of whole 16-byte
// bf16 units up to MK_PREFILL_MAX_HEAD_DIM, by the caches' element bytes.
std::set<std::pair<int64_t, uint64_t>> prefillAttentionShapes(const TaskGraph &graph) {
  std::set<std::pair<int64_t, uint64_t>> shapes;
  for (const Operation &op : graph.operations)
    if (op.kind == OpKind::Attention && op.headDim % MK_PREFILL_HEAD_DIM_UNIT == 0 &&
        op.headDim <= MK_PREFILL_MAX_HEAD_DIM && op.keyCache < graph.buffers.size())
      shapes.insert({op.headDim, bytesPerElement(graph.buffers[op.keyCache].element)});
  return shapes;
}

// A decode kernel's CUBIN also holds the kernels a prompt runs layer by
// layer (runtime/format/PrefillArgs.h): the loader finds them by name.
void emitPrefillKernels(std::ostream &os, const TaskGraph &graph) {
  os << "\n// A prompt's rows, layer by layer (runtime/format/PrefillArgs.h).\n"
     << "extern \"C\" __constant__ unsigned " MK_PREFILL_ABI_NAME " = MK_PREFILL_ABI_VERSION;\n"
     << "extern \"C\" __global__ void __launch_bounds__(MK_PREFILL_THREADS)\n"
     << "    " MK_PREFILL_EMBED_NAME "(const MkPrefillEmbedArgs args) {\n"
     << "  mk::gpu::prefillEmbed(args);\n}\n"
     << "extern \"C\" __global__ void __launch_bounds__(MK_PREFILL_THREADS)\n"
     << "    " MK_PREFILL_NORM_NAME "(const MkPrefillNormArgs args) {\n"
     << "  mk::gpu::prefillNorm(args);\n}\n"
     << "extern \"C\" __global__ void __launch_bounds__(MK_PREFILL_THREADS)\n"
     << "    " MK_PREFILL_EPILOGUE_NAME "(const MkPrefillEpilogueArgs args) {\n"
     << "  mk::gpu::prefillEpilogue(args);\n}\n"
     << "extern \"C\" __global__ void __launch_bounds__(MK_PREFILL_ARGMAX_THREADS)\n"
     << "    " MK_PREFILL_ARGMAX_NAME "(const MkPrefillArgmaxArgs args) {\n"
     << "  mk::gpu::prefillArgmax(args);\n}\n";
  // Heads of up to 64 take two attention CTAs of 4 warps an SM (up to 255
  // registers a thread), so that one CTA's copies and exponentials overlap
  // the other's tensor-core work; larger heads one of 8 warps.
  for (auto [headDim, cacheBytes] : prefillAttentionShapes(graph)) {
    std::string shape = std::to_string(headDim) + ", " + std::to_string(cacheBytes);
    os << "extern \"C\" __global__ void __launch_bounds__(32 * MK_PREFILL_PREPARE_HEADS)\n"
       << "    " << mkPrefillKernelName(MK_PREFILL_PREPARE_PREFIX, headDim, cacheBytes)
       << "(const MkPrefillPrepareArgs args) {\n"
       << "  mk::gpu::prefillPrepare<" << shape << ">(args);\n}\n"
       << "extern \"C\" __global__ void __launch_bounds__(32 * MK_PREFILL_ATTENTION_WARPS("
       << headDim << "), " << (headDim <= 64 ? 2 : 1) << ")\n"
       << "    " << mkPrefillKernelName(MK_PREFILL_ATTENTION_PREFIX, headDim, cacheBytes)
       << "(const MkPrefillAttentionArgs args) {\n"
       << "  mk::gpu::prefillAttention<" << shape << ">(args);\n}\n";
  }
}

} // namespace

std::string unsupportedStepRows(const TaskGraph &graph) {
  if (graph.rows == 1 && graph.sequences == 1)
    return "";
  if (graph.rows != graph.sequences)
    return "the graph's step holds " + std::to_string(graph.rows) + " rows of " +
           std::to_string(graph.sequences) +
           " sequence(s); the kernel runs decode and batches (a row per sequence), not yet "
           "prefill chunks";
  for (const Operation &op : graph.operations) {
    if (op.kind == OpKind::Mlp)
      return "operation '" + op.name +
             "' is an Mlp (--fuse-mlp): the kernel runs Mlp operations one row a step";
    if (projectsByHead(op))
      return "operation '" + op.name +
             "' projects by head (--o-proj-by-head): the kernel runs that one row a step";
  }
  return "";
}

std::string checkKernelOptions(const KernelOptions &options) {
  if (options.prefetchBytes % 16 != 0)
    return "the prefetch must be a multiple of 16 bytes, got " +
           std::to_string(options.prefetchBytes);
  if (options.prefetchBytes > (64u << 20))
    return "a prefetch of " + std::to_string(options.prefetchBytes) +
           " bytes per SM is past any L2";
  if (options.gemvLoadsInFlight < 1 || options.gemvLoadsInFlight > 16)
    return "gemv loads in flight must be in [1, 16], got " +
           std::to_string(options.gemvLoadsInFlight);
  if (options.gemvFirstWeights < kGemvFirstAfterInput ||
      options.gemvFirstWeights > kGemvFirstBeforeWait)
    return "no gemv first-weights mode " + std::to_string(options.gemvFirstWeights);
  return "";
}

const char *gemvFirstWeightsName(int mode) {
  switch (mode) {
  case kGemvFirstAfterInput:
    return "after-input";
  case kGemvFirstCopied:
    return "copied";
  case kGemvFirstAfterWait:
    return "after-wait";
  case kGemvFirstBeforeWait:
    return "before-wait";
  }
  return nullptr;
}

std::string spellKernelOptions(const KernelOptions &options) {
  return std::string("--weight-l2=") + (options.weightsEvictFirst ? "evict-first" : "normal") +
         " --chunk-attention=" + (options.chunkTensorCores ? "tensor-cores" : "cuda-cores") +
         " --gemv-first-weights=" + gemvFirstWeightsName(options.gemvFirstWeights) +
         " --gemv-loads=" + std::to_string(options.gemvLoadsInFlight) +
         " --prefetch-bytes=" + std::to_string(options.prefetchBytes) +
         (options.weightRing ? " --weight-ring" : "");
}

llvm::Expected<KernelSource> generateKernelSource(const TaskGraph &graph, const Schedule &schedule,
                                                  uint32_t sharedBytesPerCta,
                                                  const KernelOptions &options) {
  std::string invalid = checkKernelOptions(options);
  if (!invalid.empty())
    return error(invalid);
  ModelShapes shapes = collectShapes(graph);
  KernelVariants variants = listKernelVariants(graph);
  if (auto problem = checkSupported(graph, shapes, variants))
    return std::move(problem);
  uint64_t taskBytes = (sharedFloats(variants) * sizeof(float) + 127) / 128 * 128;
  // A Gemv merging an attention's partials stages them at the end of the
  // tasks' shared memory, past its input and its weight slots
  // (codegen/device/GemvTask.cuh: loadMergedInput).
  uint64_t mergeStagingBytes = 0;
  for (const Operation &op : graph.operations)
    if (mergesAttention(op) && !projectsByHead(op))
      mergeStagingBytes = std::max<uint64_t>(
          mergeStagingBytes, gemvMergeStagingFloats(op.numHeads, op.numChunks, op.headDim) * 4);
  auto withMergeStaging = [&](uint64_t bytes, uint32_t slots) {
    for (const KernelVariant &variant : variants.variants)
      if (variant.kind == TaskKind::Gemv && (variant.arguments[5] & MK_GEMV_MERGED_INPUT) != 0)
        bytes = std::max<uint64_t>(bytes, gemvMergeStagingOffset(variant.arguments[0],
                                                                 kMegakernelThreads, slots) +
                                              mergeStagingBytes);
    return bytes;
  };
  taskBytes = withMergeStaging(taskBytes, 0);
  if (taskBytes + kStaticSharedReserve > sharedBytesPerCta)
    return error("a task needs " + llvm::Twine(taskBytes) + " bytes of shared memory; one CTA has " +
                 llvm::Twine(sharedBytesPerCta) + ", " + llvm::Twine(kStaticSharedReserve) +
                 " of them kept for the interpreter");

  KernelSource source;
  source.threads = source.consumerThreads = kMegakernelThreads;
  const uint64_t available = sharedBytesPerCta - kStaticSharedReserve;
  // The weight ring takes what the tasks leave; without it, the gemvs'
  // own weight slots do, where shared memory leaves them room.
  // The producer's warp is one of the CTA's: more threads would cut the
  // registers per thread below what the task bodies use without spills.
  const uint32_t ringConsumers = kMegakernelThreads - 32;
  const uint64_t slotBytes = weightRingSlotBytes(variants, ringConsumers);
  source.weightRingSlots =
      options.weightRing && available > taskBytes ? weightRingSlots(available - taskBytes, slotBytes) : 0;
  source.weightRingSlotBytes = source.weightRingSlots > 0 ? static_cast<uint32_t>(slotBytes) : 0;
  uint32_t earlySlots = 0;
  uint64_t sharedBytes = taskBytes;
  if (source.weightRingSlots > 0) {
    source.consumerThreads = ringConsumers;
    sharedBytes += weightRingBytes(source.weightRingSlots, slotBytes);
  } else {
    earlySlots = gemvEarlySlots(variants, available - mergeStagingBytes, options);
    for (const KernelVariant &variant : variants.variants)
      if (variant.kind == TaskKind::Gemv)
        taskBytes = std::max(taskBytes, gemvSharedBytesWithEarlyWeights(
                                            variant.arguments[0], kMegakernelThreads, earlySlots));
    taskBytes = withMergeStaging(taskBytes, earlySlots);
    sharedBytes = taskBytes;
  }
  source.sharedBytes = static_cast<uint32_t>(sharedBytes);
  std::ostringstream os;
  os << "// Generated by mkc: the persistent megakernel of one compiled model, "
     << graph.tasks.size() << " tasks\n// on " << schedule.numSms
     << " SMs. The device library (codegen/device/) does the work; this file\n"
     << "// fixes its sizes. The model: " << shapes.numLayers << " layers, hidden "
     << shapes.hidden << ", " << shapes.numHeads << " heads over " << shapes.numKvHeads
     << " KV heads of " << shapes.headDim << ", vocabulary " << shapes.vocab << ".\n"
     << "#define MK_RANKS " << graph.ranks
     << " // of tensor parallelism (codegen/device/Ranks.cuh); the same kernel on every rank\n"
     << "#define MK_WEIGHTS_EVICT_FIRST " << (options.weightsEvictFirst ? 1 : 0)
     << " // the weights' L2 policy (codegen/device/Common.cuh)\n"
     << "#define MK_CHUNK_TENSOR_CORES " << (options.chunkTensorCores ? 1 : 0)
     << " // long attention chunks on tensor cores (AttentionChunkMma.cuh)\n"
     << "#define MK_KV_CAPACITY " << graph.maxContext
     << " // positions of each KV head in a sequence's slots (AttentionLayout.h)\n"
     << "#include \"codegen/device/Megakernel.cuh\"\n\n"
     << "namespace model {\n\n";
  emitConstants(os, graph, schedule, shapes, variants, source, sharedBytesPerCta, earlySlots,
                static_cast<uint32_t>(taskBytes));
  emitDispatcher(os, graph, variants, options);
  os << "\n} // namespace model\n\n"
     << "extern \"C\" __constant__ MkKernelInfo mk_kernel_info = {\n"
     << "    MK_KERNEL_ABI_VERSION, model::kBlockThreads, model::kSharedBytes, model::kNumSms,\n"
     << "    model::kNumTasks, model::kNumEvents, model::kNumOperations, model::kNumVariants,\n"
     << "    model::kMaxContext, model::kVocab, model::kStepRows, model::kSequences, model::kRanks,\n"
     << "    0};\n\n";
  emitVariantTable(os, variants);
  os << "extern \"C\" __global__ void __launch_bounds__(model::kBlockThreads, 1)\n"
     << "    mk_megakernel(const MkKernelArgs args) {\n"
     << "  mk::gpu::runMegakernel<model::Tasks, model::kThreads>(args);\n"
     << "}\n\n"
     << "// One task alone, on one CTA: how each task kind is checked against its\n"
     << "// CPU reference (tests/gpu/TaskKindCheck.cpp).\n"
     << "extern \"C\" __global__ void __launch_bounds__(model::kBlockThreads, 1)\n"
     << "    mk_run_task(const MkKernelArgs args, unsigned task, long long position) {\n"
     << "  mk::gpu::runOneTask<model::Tasks, model::kThreads>(args, task, position);\n"
     << "}\n";
  // A prompt of a tensor-parallel model runs through the decode steps.
  if (graph.rows == 1 && graph.ranks == 1)
    emitPrefillKernels(os, graph);
  source.text = os.str();
  return std::move(source);
}

} // namespace mk
