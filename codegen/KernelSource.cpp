#include "codegen/KernelSource.h"

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

// The shapes that select a template instantiation, each with the
// operations that have it (for the comment beside its dispatch).
struct GemvShape {
  uint64_t input;
  Epilogue epilogue;
  bool norm, bias;
  auto key() const { return std::tuple(input, epilogue, norm, bias); }
  bool operator<(const GemvShape &other) const { return key() < other.key(); }
};

struct AttentionShape {
  int64_t headDim, group, rotaryDim, chunkSize;
  auto key() const { return std::tuple(headDim, group, rotaryDim, chunkSize); }
  bool operator<(const AttentionShape &other) const { return key() < other.key(); }
};

struct ModelShapes {
  std::map<GemvShape, std::vector<std::string>> gemvs;
  std::map<AttentionShape, std::vector<std::string>> attentions;
  std::set<uint64_t> vocabularies; // of the Argmax
  uint64_t hidden = 0;
  int64_t numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
};

ModelShapes collectShapes(const TaskGraph &graph) {
  ModelShapes shapes;
  for (const Operation &op : graph.operations) {
    switch (op.kind) {
    case OpKind::Embed:
      shapes.hidden = op.outputLength;
      break;
    case OpKind::Gemv:
      shapes.gemvs[{op.inputLength, op.epilogue, !op.norm.name.empty(), !op.biases.empty()}]
          .push_back(op.name);
      break;
    case OpKind::Attention:
      shapes.attentions[{op.headDim, op.numHeads / op.numKvHeads, op.rotaryDim, op.chunkSize}]
          .push_back(op.name);
      ++shapes.numLayers;
      shapes.numHeads = op.numHeads;
      shapes.numKvHeads = op.numKvHeads;
      shapes.headDim = op.headDim;
      break;
    case OpKind::Argmax:
      shapes.vocabularies.insert(op.inputLength);
      break;
    }
  }
  return shapes;
}

const char *epilogueName(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return "MK_EPILOGUE_NONE";
  case Epilogue::SiluMul:
    return "MK_EPILOGUE_SILU_MUL";
  case Epilogue::Residual:
    return "MK_EPILOGUE_RESIDUAL";
  }
  return "MK_EPILOGUE_NONE";
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

// Floats of dynamic shared memory each task kind needs, the largest wins:
// a gemv holds its whole input, an attention preparation its group's q
// heads and k, a chunk its q heads, scores and statistics.
uint64_t sharedFloats(const ModelShapes &shapes) {
  uint64_t floats = 0;
  for (const auto &[shape, names] : shapes.gemvs)
    floats = std::max<uint64_t>(floats, shape.input);
  for (const auto &[shape, names] : shapes.attentions) {
    floats = std::max<uint64_t>(floats, (shape.group + 1) * shape.headDim);
    floats = std::max<uint64_t>(floats, shape.group * shape.headDim +
                                            shape.group * shape.chunkSize + 2 * shape.group);
  }
  return floats;
}

void emitConstants(std::ostream &os, const TaskGraph &graph, const Schedule &schedule,
                   const ModelShapes &shapes, uint32_t sharedBytes, uint32_t sharedBytesPerCta) {
  os << "constexpr int kThreads = " << kMegakernelThreads << ";\n"
     << "constexpr int kSharedBytes = " << sharedBytes << "; // dynamic, per CTA\n"
     << "constexpr int kNumSms = " << schedule.numSms << ";\n"
     << "constexpr int kNumTasks = " << graph.tasks.size() << ";\n"
     << "constexpr int kNumEvents = " << graph.events.size() << ";\n"
     << "constexpr int kNumOperations = " << graph.operations.size() << ";\n"
     << "constexpr long long kMaxContext = " << graph.maxContext << ";\n"
     << "constexpr int kHidden = " << shapes.hidden << ";\n"
     << "constexpr int kVocab = " << *shapes.vocabularies.begin() << ";\n\n"
     << "static_assert(kThreads % 32 == 0 && kThreads >= 64 && kThreads <= 1024,\n"
     << "              \"whole warps, a second warp to copy records while the first waits\");\n"
     << "static_assert(kSharedBytes + " << kStaticSharedReserve << " <= " << sharedBytesPerCta
     << ", \"one CTA's shared memory on the target\");\n\n";
}

void emitDispatcher(std::ostream &os, const ModelShapes &shapes, const KernelOptions &options) {
  os << "struct Tasks {\n"
     << "  static constexpr unsigned long long kPrefetchBytes = " << options.prefetchBytes << ";\n"
     << "  static constexpr int kGemvLoadsInFlight = " << options.gemvLoadsInFlight << ";\n\n"
     << "  __device__ static void run(const mk::gpu::TaskContext &context, const MkTaskRecord &task,\n"
     << "                             const MkOperationRecord &op) {\n"
     << "    using namespace mk::gpu;\n"
     << "    switch (task.kind) {\n"
     << "    case MK_TASK_EMBED:\n"
     << "      return embedTask<kHidden, kThreads>(context, task, op);\n"
     << "    case MK_TASK_GEMV:\n";
  for (const auto &[shape, names] : shapes.gemvs)
    os << "      // " << listNames(names) << "\n"
       << "      if (op.inputLength == " << shape.input << " && op.epilogue == "
       << epilogueName(shape.epilogue) << " && (op.norm != MK_NO_OFFSET) == "
       << (shape.norm ? "true" : "false") << " && (op.bias != MK_NO_OFFSET) == "
       << (shape.bias ? "true" : "false") << ")\n"
       << "        return gemvTask<" << shape.input << ", " << epilogueName(shape.epilogue) << ", "
       << (shape.norm ? "true" : "false") << ", " << (shape.bias ? "true" : "false")
       << ", kThreads, kGemvLoadsInFlight>(context, task, op);\n";
  os << "      break;\n";

  struct Phase {
    const char *kind, *function;
    bool rotary, chunk;
  };
  for (Phase phase : {Phase{"MK_TASK_ATTENTION_PREPARE", "attentionPrepareTask", true, false},
                      Phase{"MK_TASK_ATTENTION_CHUNK", "attentionChunkTask", false, true},
                      Phase{"MK_TASK_ATTENTION_MERGE", "attentionMergeTask", false, false}}) {
    os << "    case " << phase.kind << ":\n";
    for (const auto &[shape, names] : shapes.attentions) {
      os << "      // " << listNames(names) << "\n"
         << "      if (op.headDim == " << shape.headDim << " && op.numHeads == " << shape.group
         << " * op.numKvHeads && op.rotaryDim == " << shape.rotaryDim
         << " && op.chunkSize == " << shape.chunkSize << ")\n"
         << "        return " << phase.function << "<" << shape.headDim << ", " << shape.group;
      if (phase.rotary)
        os << ", " << shape.rotaryDim;
      if (phase.chunk)
        os << ", " << shape.chunkSize;
      os << ", kThreads>(context, task, op);\n";
    }
    os << "      break;\n";
  }

  os << "    case MK_TASK_ARGMAX:\n";
  for (uint64_t vocab : shapes.vocabularies)
    os << "      if (op.inputLength == " << vocab << ")\n"
       << "        return argmaxTask<" << (vocab == *shapes.vocabularies.begin() ? "kVocab" : std::to_string(vocab)) << ", kThreads>(context, task, op);\n";
  os << "      break;\n"
     << "    }\n"
     << "    if (threadIdx.x == 0)\n"
     << "      raiseError(context, MK_ERROR_UNKNOWN_VARIANT, task.kind);\n"
     << "  }\n"
     << "};\n";
}

llvm::Error checkSupported(const TaskGraph &graph, const ModelShapes &shapes) {
  if (shapes.vocabularies.size() != 1)
    return error("the graph has " + llvm::Twine(shapes.vocabularies.size()) +
                 " argmax operations; the kernel runs exactly one");
  for (const Operation &op : graph.operations) {
    if (op.kind == OpKind::Attention && (op.numKvHeads <= 0 || op.numHeads % op.numKvHeads != 0))
      return error("attention '" + op.name + "' has " + llvm::Twine(op.numHeads) +
                   " heads over " + llvm::Twine(op.numKvHeads) + " KV heads");
    if (op.kind == OpKind::Attention && op.rotaryDim % 2 != 0)
      return error("attention '" + op.name + "' rotates an odd " + llvm::Twine(op.rotaryDim) +
                   " dimensions");
  }
  return llvm::Error::success();
}

} // namespace

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
  return "";
}

llvm::Expected<KernelSource> generateKernelSource(const TaskGraph &graph, const Schedule &schedule,
                                                  uint32_t sharedBytesPerCta,
                                                  const KernelOptions &options) {
  std::string invalid = checkKernelOptions(options);
  if (!invalid.empty())
    return error(invalid);
  ModelShapes shapes = collectShapes(graph);
  if (auto problem = checkSupported(graph, shapes))
    return std::move(problem);
  uint64_t sharedBytes = (sharedFloats(shapes) * sizeof(float) + 15) / 16 * 16;
  if (sharedBytes + kStaticSharedReserve > sharedBytesPerCta)
    return error("a task needs " + llvm::Twine(sharedBytes) + " bytes of shared memory; one CTA has " +
                 llvm::Twine(sharedBytesPerCta) + ", " + llvm::Twine(kStaticSharedReserve) +
                 " of them kept for the interpreter");

  KernelSource source;
  source.threads = kMegakernelThreads;
  source.sharedBytes = static_cast<uint32_t>(sharedBytes);
  std::ostringstream os;
  os << "// Generated by mkc: the persistent megakernel of one compiled model, "
     << graph.tasks.size() << " tasks\n// on " << schedule.numSms
     << " SMs. The device library (codegen/device/) does the work; this file\n"
     << "// fixes its sizes. The model: " << shapes.numLayers << " layers, hidden "
     << shapes.hidden << ", " << shapes.numHeads << " heads over " << shapes.numKvHeads
     << " KV heads of " << shapes.headDim << ", vocabulary " << *shapes.vocabularies.begin()
     << ".\n"
     << "#include \"codegen/device/Megakernel.cuh\"\n\n"
     << "namespace model {\n\n";
  emitConstants(os, graph, schedule, shapes, source.sharedBytes, sharedBytesPerCta);
  emitDispatcher(os, shapes, options);
  os << "\n} // namespace model\n\n"
     << "extern \"C\" __constant__ MkKernelInfo mk_kernel_info = {\n"
     << "    MK_KERNEL_ABI_VERSION, model::kThreads, model::kSharedBytes, model::kNumSms,\n"
     << "    model::kNumTasks, model::kNumEvents, model::kNumOperations, 0,\n"
     << "    model::kMaxContext, model::kVocab};\n\n"
     << "extern \"C\" __global__ void __launch_bounds__(model::kThreads, 1)\n"
     << "    mk_megakernel(const MkKernelArgs args) {\n"
     << "  mk::gpu::runMegakernel<model::Tasks, model::kThreads>(args);\n"
     << "}\n";
  source.text = os.str();
  return std::move(source);
}

} // namespace mk
