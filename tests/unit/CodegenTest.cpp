// Code generation without a GPU: the generated source specializes the
// toy graph's shapes (tests/unit/ToyTaskGraph.h: two attention shapes, qkv
// biases, every epilogue), every include of the embedded device library
// resolves inside it, ptxas's report is read, and, where NVRTC is
// installed, the toy's kernel compiles without spills.
#include "ToyTaskGraph.h"

#include "codegen/KernelSource.h"
#include "codegen/Megakernel.h"
#include "codegen/PtxasReport.h"

#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>

namespace mk {
namespace {

constexpr uint32_t kHopperSharedBytes = 227 * 1024;

TEST(CodegenTest, SourceInstantiatesEveryShapeOfTheGraph) {
  toy::ToyModel model = toy::buildToyModel();
  auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  const std::string &text = source->text;
  EXPECT_NE(text.find("#include \"codegen/device/Megakernel.cuh\""), std::string::npos);
  EXPECT_NE(text.find("constexpr int kNumSms = 4;"), std::string::npos);
  EXPECT_NE(text.find("constexpr int kVocab = " + std::to_string(toy::kVocab) + ";"),
            std::string::npos);
  EXPECT_NE(text.find("gemvTask<16, MK_EPILOGUE_SILU_MUL, true, false, false, 0, 1, kThreads, kGemvLoadsInFlight, kGemvEarlySlots, kGemvFirstWeights, kTaskSharedBytes, kWeightRingSlots, kWeightRingSlotBytes>"),
            std::string::npos);
  EXPECT_NE(text.find("gemvTask<24, MK_EPILOGUE_RESIDUAL, false, false, false, 0, 1, kThreads, kGemvLoadsInFlight, kGemvEarlySlots, kGemvFirstWeights, kTaskSharedBytes, kWeightRingSlots, kWeightRingSlotBytes>"),
            std::string::npos);
  EXPECT_NE(text.find("gemvTask<16, MK_EPILOGUE_NONE, true, true, false, 0, 1, kThreads, kGemvLoadsInFlight, kGemvEarlySlots, kGemvFirstWeights, kTaskSharedBytes, kWeightRingSlots, kWeightRingSlotBytes>"), std::string::npos);
  // Both layers' attention shapes, told apart by their rotary dimensions.
  std::regex chunk("attentionChunkTask<8, 2, [0-9]+, ([0-9]+), 4, 1, kThreads>");
  std::set<std::string> rotary;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), chunk); it != std::sregex_iterator();
       ++it)
    rotary.insert((*it)[1]);
  EXPECT_EQ(rotary.size(), 2u);
  EXPECT_NE(text.find("argmaxTask<" + std::to_string(toy::kVocab) + ", 1, kThreads>"), std::string::npos);
  // Every task is dispatched by the number of its variant.
  EXPECT_NE(text.find("switch (task.variant)"), std::string::npos);
  EXPECT_EQ(source->threads, kMegakernelThreads);
  EXPECT_GT(source->sharedBytes, 0u);
  EXPECT_EQ(source->sharedBytes % 16, 0u);
}

TEST(CodegenTest, KernelOptionsBecomeConstants) {
  toy::ToyModel model = toy::buildToyModel();
  KernelOptions options;
  options.prefetchBytes = 4096;
  options.gemvLoadsInFlight = 2;
  auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  EXPECT_NE(source->text.find("kPrefetchBytes = 4096;"), std::string::npos);
  EXPECT_NE(source->text.find("kGemvLoadsInFlight = 2;"), std::string::npos);
  EXPECT_NE(source->text.find("kGemvFirstWeights = " + std::to_string(kGemvFirstBeforeWait) + ";"),
            std::string::npos);
  options.gemvFirstWeights = kGemvFirstCopied;
  source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  EXPECT_NE(source->text.find("kGemvFirstWeights = " + std::to_string(kGemvFirstCopied) + ";"),
            std::string::npos);
  options.gemvFirstWeights = 7;
  source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
  ASSERT_FALSE(static_cast<bool>(source));
  EXPECT_NE(llvm::toString(source.takeError()).find("first-weights mode 7"), std::string::npos);
}

// The library's switches (the weights' L2 policy, the long chunks' tensor
// cores) are macros set before it is included: off by default, on when asked.
TEST(CodegenTest, LibrarySwitchesPrecedeTheLibrary) {
  toy::ToyModel model = toy::buildToyModel();
  auto defineOf = [](const std::string &text, const std::string &name) -> std::string {
    size_t at = text.find("#define " + name + " ");
    size_t library = text.find("#include \"codegen/device/Megakernel.cuh\"");
    if (at == std::string::npos || library == std::string::npos || at > library)
      return "missing";
    return text.substr(at + 9 + name.size(), 1);
  };
  KernelOptions options;
  auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  // Both on by default (measured faster: bench/NOTES.md), both can be off.
  EXPECT_EQ(defineOf(source->text, "MK_WEIGHTS_EVICT_FIRST"), "1");
  EXPECT_EQ(defineOf(source->text, "MK_CHUNK_TENSOR_CORES"), "1");
  options.weightsEvictFirst = false;
  options.chunkTensorCores = false;
  source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  EXPECT_EQ(defineOf(source->text, "MK_WEIGHTS_EVICT_FIRST"), "0");
  EXPECT_EQ(defineOf(source->text, "MK_CHUNK_TENSOR_CORES"), "0");
}

// The gemvs' weight slots in shared memory are what the gemvs use: two
// stages of a batch for rows too short for a batch to hold the loads in
// flight (the toy's rows of 16 and 24: a batch of 2 slots at most, so 4),
// none where every batch holds them (one load in flight), a batch where the
// first is copied while the gemv waits.
TEST(CodegenTest, GemvWeightSlotsAreWhatTheGemvsUse) {
  toy::ToyModel model = toy::buildToyModel();
  auto slotsOf = [&](const KernelOptions &options) {
    auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
    EXPECT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
    std::smatch match;
    std::regex slots("constexpr int kGemvEarlySlots = ([0-9]+);");
    return std::regex_search(source->text, match, slots) ? std::stoi(match[1]) : -1;
  };
  KernelOptions shortRows;
  EXPECT_EQ(slotsOf(shortRows), 4);
  KernelOptions oneLoad;
  oneLoad.gemvLoadsInFlight = 1;
  EXPECT_EQ(slotsOf(oneLoad), 0);
  oneLoad.gemvFirstWeights = kGemvFirstCopied;
  EXPECT_EQ(slotsOf(oneLoad), 2) << "the SiluMul rows' batch: one chunk of gate and of up";
}

// The weight ring, when asked for, takes the shared memory the tasks leave,
// and its producer one warp of the CTA's; without it (the default, and on a
// target without bulk copies, which compileMegakernel turns it off for) all
// threads run tasks.
TEST(CodegenTest, WeightRingTakesAWarpAndTheSharedMemoryLeft) {
  toy::ToyModel model = toy::buildToyModel();
  KernelOptions withRing;
  withRing.weightRing = true;
  auto ring = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, withRing);
  ASSERT_TRUE(static_cast<bool>(ring)) << llvm::toString(ring.takeError());
  EXPECT_EQ(ring->threads, kMegakernelThreads);
  EXPECT_EQ(ring->consumerThreads, kMegakernelThreads - 32);
  EXPECT_EQ(ring->weightRingSlotBytes, 16384u) << "the toy's rows are short: the least slot";
  EXPECT_GE(ring->weightRingSlots, 12u);
  EXPECT_LE(ring->sharedBytes + kStaticSharedReserve, kHopperSharedBytes);
  EXPECT_NE(ring->text.find("constexpr int kThreads = 480;"), std::string::npos);
  EXPECT_NE(ring->text.find("constexpr int kWeightRingSlots = " +
                            std::to_string(ring->weightRingSlots) + ";"),
            std::string::npos);

  auto plain = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
  ASSERT_TRUE(static_cast<bool>(plain)) << llvm::toString(plain.takeError());
  EXPECT_EQ(plain->consumerThreads, kMegakernelThreads);
  EXPECT_EQ(plain->weightRingSlots, 0u);
  EXPECT_NE(plain->text.find("constexpr int kWeightRingSlots = 0;"), std::string::npos);
}

TEST(CodegenTest, RefusesKernelOptionsOutOfRange) {
  toy::ToyModel model = toy::buildToyModel();
  for (KernelOptions options : {KernelOptions{100, 8}, KernelOptions{4096, 0},
                                KernelOptions{4096, 17}, KernelOptions{128u << 20, 8}}) {
    auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes, options);
    ASSERT_FALSE(static_cast<bool>(source));
    EXPECT_FALSE(checkKernelOptions(options).empty());
    llvm::consumeError(source.takeError());
  }
  EXPECT_TRUE(checkKernelOptions(KernelOptions{}).empty());
  EXPECT_TRUE(checkKernelOptions(KernelOptions{0, 1}).empty());
}

TEST(CodegenTest, RefusesSharedMemoryPastTheTarget) {
  toy::ToyModel model = toy::buildToyModel();
  auto source = generateKernelSource(model.graph, model.schedule, kStaticSharedReserve + 64);
  ASSERT_FALSE(static_cast<bool>(source));
  EXPECT_NE(llvm::toString(source.takeError()).find("bytes of shared memory"), std::string::npos);
}

TEST(CodegenTest, RefusesUnknownArchitectures) {
  toy::ToyModel model = toy::buildToyModel();
  auto source = megakernelSource(model.graph, model.schedule, "sm_75");
  ASSERT_FALSE(static_cast<bool>(source));
  EXPECT_NE(llvm::toString(source.takeError()).find("supported: sm_80"), std::string::npos);
}

TEST(CodegenTest, EveryIncludeOfTheDeviceLibraryIsEmbedded) {
  std::set<std::string> names;
  for (const DeviceLibraryFile &file : deviceLibrary())
    names.insert(file.name);
  ASSERT_TRUE(names.count("codegen/device/Megakernel.cuh"));
  std::regex include("#include \"([^\"]+)\"");
  for (const DeviceLibraryFile &file : deviceLibrary()) {
    std::string text = file.text;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
         it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(names.count((*it)[1])) << file.name << " includes " << (*it)[1];
  }
}

TEST(CodegenTest, ReadsThePtxasReportOfTheKernel) {
  const char *log = "ptxas info    : 24 bytes gmem\n"
                    "ptxas info    : Function properties for helper\n"
                    "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
                    "ptxas info    : Compiling entry function 'mk_megakernel' for 'sm_90a'\n"
                    "ptxas info    : Function properties for mk_megakernel\n"
                    "    32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                    "ptxas info    : Used 111 registers, used 1 barriers, 496 bytes smem, 400 "
                    "bytes cmem[0]\n";
  std::optional<PtxasReport> report = parsePtxasReport(log, "mk_megakernel");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->registers, 111);
  EXPECT_EQ(report->staticSharedBytes, 496);
  EXPECT_EQ(report->stackFrameBytes, 32);
  EXPECT_EQ(report->spillStoreBytes, 0);
  EXPECT_EQ(report->spillLoadBytes, 0);
  EXPECT_FALSE(parsePtxasReport("ptxas info    : 0 bytes gmem\n", "mk_megakernel").has_value());
}

// The graph's kernel through NVRTC into `kernel`; where NVRTC is missing
// the test is skipped, and a kernel that fails to compile fails it.
void compileWithNvrtc(const TaskGraph &graph, const Schedule &schedule,
                      std::optional<CompiledKernel> &kernel) {
  auto compiled = compileMegakernel(graph, schedule);
  if (compiled) {
    kernel = std::move(*compiled);
    return;
  }
  std::string error = llvm::toString(compiled.takeError());
  if (error.find("NVRTC not found") != std::string::npos)
    GTEST_SKIP() << error;
  ADD_FAILURE() << error;
}

TEST(CodegenTest, NvrtcCompilesTheToyKernelWithoutSpills) {
  toy::ToyModel model = toy::buildToyModel();
  std::optional<CompiledKernel> kernel;
  compileWithNvrtc(model.graph, model.schedule, kernel);
  if (!kernel)
    return;
  EXPECT_GT(kernel->cubin.size(), 4u);
  EXPECT_EQ(std::string(kernel->cubin.begin(), kernel->cubin.begin() + 4), "\x7f" "ELF");
  EXPECT_NE(kernel->ptx.find(".entry mk_megakernel"), std::string::npos);
  EXPECT_GT(kernel->registers, 0);
  EXPECT_LE(kernel->registers, 65536 / kernel->threads);
  EXPECT_EQ(kernel->spillBytes, 0);
  EXPECT_GE(kernel->sharedBytes, kernel->dynamicSharedBytes);
  EXPECT_GT(kernel->compileSeconds, 0);
  // Its prompt kernels: embed, norm, epilogue and argmax, and the toy's
  // heads of 8 (padded to a k16 step) take prepare and attention.
  EXPECT_EQ(kernel->promptKernels, 6);
  EXPECT_EQ(kernel->promptSpillBytes, 0);
}

// A decode kernel's source also holds the prompt kernels
// (runtime/format/PrefillArgs.h), attention's per head dim of whole 8s
// (16-byte bf16 units) and cache element; a batch kernel's holds none.
TEST(CodegenTest, DecodeKernelsHoldThePromptKernels) {
  toy::ToyModel model = toy::buildToyModel();
  auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  for (const char *name : {"mk_prefill_abi", "mk_prefill_embed(", "mk_prefill_norm(",
                           "mk_prefill_epilogue(", "mk_prefill_argmax("})
    EXPECT_NE(source->text.find(name), std::string::npos) << name;
  EXPECT_NE(source->text.find("mk_prefill_attention_d8_c4(const MkPrefillAttentionArgs args)"),
            std::string::npos);
  EXPECT_NE(source->text.find("mk::gpu::prefillPrepare<8, 4>(args)"), std::string::npos);
  for (Operation &op : model.graph.operations)
    if (op.kind == OpKind::Attention)
      op.headDim = 12; // not whole 16-byte units (the source only; the graph is not run)
  source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  EXPECT_EQ(source->text.find("mk_prefill_attention_d"), std::string::npos);
  EXPECT_EQ(source->text.find("mk_prefill_prepare_d"), std::string::npos);

  toy::ToyModel batch = toy::buildToyModel();
  toy::makeRows(batch.graph, 2, 2);
  source = generateKernelSource(batch.graph, batch.schedule, kHopperSharedBytes);
  ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
  EXPECT_EQ(source->text.find("mk_prefill"), std::string::npos);
}

// Batches of 2 and 4 sequences (tests/unit/ToyTaskGraph.h's makeRows):
// every kind's device function over the step's rows (the gemvs on CUDA
// cores at 2, on tensor cores at 4), compiled without spills.
TEST(CodegenTest, NvrtcCompilesTheToyBatchKernelsWithoutSpills) {
  for (int64_t rows : {2, 4}) {
    toy::ToyModel model = toy::buildToyModel();
    toy::makeRows(model.graph, rows, rows);
    auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
    ASSERT_TRUE(static_cast<bool>(source)) << llvm::toString(source.takeError());
    EXPECT_NE(source->text.find("constexpr int kStepRows = " + std::to_string(rows) + ";"),
              std::string::npos);
    EXPECT_NE(source->text.find("argmaxTask<" + std::to_string(toy::kVocab) + ", " +
                                std::to_string(rows) + ", kThreads>"),
              std::string::npos);
    std::optional<CompiledKernel> kernel;
    compileWithNvrtc(model.graph, model.schedule, kernel);
    if (!kernel)
      return;
    EXPECT_EQ(kernel->spillBytes, 0) << "a batch of " << rows;
  }
}

// A prefill chunk's rows attend to the chunk's earlier rows, which the
// device functions do not yet do: refused by name.
TEST(CodegenTest, RefusesPrefillChunks) {
  toy::ToyModel model = toy::buildToyModel();
  toy::makeRows(model.graph, 4, 1);
  auto source = generateKernelSource(model.graph, model.schedule, kHopperSharedBytes);
  ASSERT_FALSE(static_cast<bool>(source));
  EXPECT_NE(llvm::toString(source.takeError()).find("not yet prefill chunks"), std::string::npos);
}

} // namespace
} // namespace mk
