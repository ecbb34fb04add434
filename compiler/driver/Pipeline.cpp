#include "compiler/driver/Pipeline.h"

#include "compiler/driver/CompilePhases.h"

#include "compiler/schedule/Scheduler.h"
#include "compiler/taskgraph/InlineTasks.h"
#include "compiler/taskgraph/LowerToTasks.h"
#include "compiler/taskgraph/ShardOperations.h"
#include "core/weights/SlicedValues.h"
#include "core/validator/Validator.h"
#include "compiler/dialect/MkDialect.h"
#include "frontends/gguf/GgufFile.h"
#include "frontends/gguf/import/GgufImporter.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <optional>

namespace mk {

namespace {

using ByHead = TargetDescription::ByHead;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// Positive integers up to 2^31, which keeps every size the lowering derives
// from them far from overflow.
llvm::Expected<int64_t> positive(llvm::StringRef flag, llvm::StringRef text) {
  int64_t value = 0;
  if (text.getAsInteger(10, value) || value <= 0 || value > (int64_t(1) << 31))
    return error(flag + " must be a positive integer, got '" + text + "'");
  return value;
}

llvm::Expected<ImportedModel> parseMlir(mlir::MLIRContext &context, const std::string &path) {
  context.loadDialect<MkDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  if (!module)
    return error("cannot read mk IR from '" + path + "'");
  return ImportedModel{std::move(module), WeightTable()};
}

} // namespace

llvm::Expected<ImportedModel> importModel(mlir::MLIRContext &context, const std::string &path) {
  if (llvm::StringRef(path).endswith(".mlir"))
    return parseMlir(context, path);
  // By magic (or a .gguf name, so a damaged file is read as GGUF and its
  // problem told), else ONNX.
  if (looksLikeGguf(path))
    return importGgufModel(context, path);
  return importOnnxModel(context, path);
}

namespace {

// The steps of several rows asked for, each lowered, given finer events,
// scheduled and validated as decode is.
llvm::Error scheduleRowSteps(CompiledModel &compiled, const CompileOptions &options) {
  std::vector<StepShape> shapes;
  if (options.prefillChunk > 0)
    shapes.push_back({options.prefillChunk, 1});
  for (int64_t batch : options.batchSizes)
    shapes.push_back({batch, batch});
  for (StepShape shape : shapes) {
    auto tasks = lowerToTasks(compiled.imported.module.get(), options.target, options.maxContext,
                              shape);
    if (!tasks)
      return tasks.takeError();
    chunkDependencies(*tasks);
    if (options.target.inlineMerge)
      inlineAttentionMerges(*tasks);
    Schedule schedule = scheduleTasks(*tasks, options.target);
    std::string problem = validateSchedule(*tasks, schedule);
    if (!problem.empty())
      return error("the compiled schedule of " + llvm::Twine(shape.rows) + " rows over " +
                   llvm::Twine(shape.sequences) + " sequences does not validate: " + problem);
    compiled.rowSteps.push_back({std::move(*tasks), std::move(schedule)});
  }
  return llvm::Error::success();
}

// Every rank's graph of the decode graph, on rank 0's schedule (the ranks'
// graphs are alike, and one schedule keeps their cross-rank waits in the
// same order on every rank), and the slices of the weights they name.
llvm::Error shardRanks(CompiledModel &compiled, const CompileOptions &options) {
  if (options.tensorParallel == 1)
    return llvm::Error::success();
  if (!compiled.rowSteps.empty())
    return error("--tensor-parallel does not go with --prefill-chunk or --batch yet");
  // A rank's share of an Mlp would add partial sums of its own: the
  // sharding splits gate_up and down as two Gemvs.
  if (options.target.fuseMlp)
    return error("--tensor-parallel does not go with --fuse-mlp yet");
  // A rank's o_proj would merge its own heads' partials: the sharding cuts
  // the merge's tiles, which this build has none of.
  if (options.target.mergeInOProj || options.target.oProjByHead == ByHead::On)
    return error("--tensor-parallel does not go with --merge-in-o-proj or --o-proj-by-head yet");
  std::vector<WeightSlice> slices;
  for (int64_t rank = 0; rank < options.tensorParallel; ++rank) {
    auto graph = shardForRank(compiled.tasks, options.tensorParallel, rank, options.target, slices);
    if (!graph)
      return graph.takeError();
    chunkDependencies(*graph);
    markRankWaits(*graph);
    if (options.target.inlineMerge)
      inlineAttentionMerges(*graph);
    Schedule schedule =
        compiled.ranks.empty() ? scheduleTasks(*graph, options.target) : compiled.ranks[0].schedule;
    std::string problem = validateSchedule(*graph, schedule);
    if (!problem.empty())
      return error("the schedule of rank " + llvm::Twine(rank) + " does not validate: " + problem);
    compiled.ranks.push_back({std::move(*graph), std::move(schedule)});
  }
  if (!compiled.imported.weights.all().empty())
    addWeightSlices(compiled.imported.weights, slices);
  compiled.weightSlices = std::move(slices);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CompiledModel> compileToSchedule(mlir::MLIRContext &context,
                                                const std::string &modelPath,
                                                const CompileOptions &options) {
  using Phase = CompilePhases::Phase;
  const bool byHead = options.target.oProjByHead == ByHead::On;
  if ((options.target.inlineMerge + options.target.mergeInOProj + byHead) > 1)
    return error("--inline-merge, --merge-in-o-proj and --o-proj-by-head are places for the "
                 "same merge: choose one");
  // An Mlp reads its input as f32; a Gemv projecting by head adds into a
  // fixed64 one, and the Mlp's own fixed64 output could not seed it.
  if (options.target.fuseMlp && byHead)
    return error("--fuse-mlp does not go with --o-proj-by-head yet");
  std::optional<llvm::Expected<ImportedModel>> imported;
  {
    Phase phase(options.phases, "import");
    imported.emplace(importModel(context, modelPath));
  }
  if (!*imported)
    return imported->takeError();
  {
    Phase phase(options.phases, "passes");
    if (mlir::failed(runFusionPipeline((*imported)->module.get(), options.printIrAfterAll,
                                       &(*imported)->weights)))
      return error("the fusion pipeline failed on '" + modelPath + "'");
  }
  std::optional<CompiledModel> compiled;
  {
    Phase phase(options.phases, "task graph");
    // Auto gives way to the sharding, which cuts merge tasks.
    TargetDescription target = options.target;
    if (options.tensorParallel > 1 && target.oProjByHead == ByHead::Auto)
      target.oProjByHead = ByHead::Off;
    auto tasks = lowerToTasks((*imported)->module.get(), target, options.maxContext);
    if (!tasks)
      return tasks.takeError();
    compiled.emplace(CompiledModel{std::move(**imported), std::move(*tasks), {}, {}});
    compiled->dependencies = chunkDependencies(compiled->tasks);
    if (options.target.inlineMerge)
      inlineAttentionMerges(compiled->tasks);
  }
  {
    Phase phase(options.phases, "schedule");
    compiled->schedule = scheduleTasks(compiled->tasks, options.target);
    // The loader validates again; failing here names the compiler's bug before
    // anything runs.
    std::string problem = validateSchedule(compiled->tasks, compiled->schedule);
    if (!problem.empty())
      return error("the compiled schedule does not validate: " + problem);
    if (auto failed = scheduleRowSteps(*compiled, options))
      return std::move(failed);
    if (auto failed = shardRanks(*compiled, options))
      return std::move(failed);
  }
  return std::move(*compiled);
}

llvm::Expected<bool> parseCompileOption(llvm::StringRef arg, CompileOptions &options) {
  auto [flag, value] = arg.split('=');
  if (flag == "--max-context") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    // The longest context of today's models (2^20 positions). The kernel's
    // event counters count up for a whole context in 32 bits, so this leaves
    // an event 4096 triggers a step; a bigger context could compile to an
    // artifact whose counters wrap, that no loader can run.
    if (*parsed > kMostContext)
      return error(flag + " must be at most " + llvm::Twine(kMostContext) +
                   " positions, got " + value);
    options.maxContext = *parsed;
    return true;
  }
  if (flag == "--num-sms") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    // One queue per SM, one CTA each, all resident at once: no GPU has a
    // thousand SMs, and a schedule for more could run nowhere but the CPU.
    constexpr int64_t kMostSms = 1024;
    if (*parsed > kMostSms)
      return error(flag + " must be at most " + llvm::Twine(kMostSms) + " (one queue per SM), got " +
                   value);
    options.target.numSms = *parsed;
    return true;
  }
  if (flag == "--longest-attention-chunk") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    // A chunk's scores sit in shared memory (group x chunk floats): past
    // 16384 positions no group of q heads fits beside the rest.
    constexpr int64_t kShortest = 16, kLongest = 16384;
    // Chunks are whole spans' grains (core/protocol/AttentionLayout.h).
    if (*parsed < kShortest || *parsed > kLongest || *parsed % kShortest != 0)
      return error(flag + " must be a multiple of " + llvm::Twine(kShortest) + " from " +
                   llvm::Twine(kShortest) + " to " + llvm::Twine(kLongest) + ", got " + value);
    options.target.longestAttentionChunk = static_cast<uint64_t>(*parsed);
    return true;
  }
  if (flag == "--least-gemv-tile-bytes") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    options.target.leastGemvTileBytes = static_cast<uint64_t>(*parsed);
    return true;
  }
  if (flag == "--kv-cache") {
    if (value != "f32" && value != "bf16")
      return error(flag + " must be f32 or bf16, got '" + value + "'");
    options.target.kvCache = value == "bf16" ? BufferElement::BF16 : BufferElement::F32;
    return true;
  }
  if (arg == "--no-logit-picks") {
    options.target.logitPicks = false;
    return true;
  }
  if (arg == "--inline-merge") {
    options.target.inlineMerge = true;
    return true;
  }
  if (arg == "--fuse-mlp") {
    options.target.fuseMlp = true;
    return true;
  }
  if (arg == "--merge-in-o-proj") {
    options.target.mergeInOProj = true;
    return true;
  }
  if (arg == "--o-proj-by-head") {
    options.target.oProjByHead = ByHead::On;
    return true;
  }
  if (flag == "--o-proj-by-head") {
    if (value == "on")
      options.target.oProjByHead = ByHead::On;
    else if (value == "auto")
      options.target.oProjByHead = ByHead::Auto;
    else if (value == "off")
      options.target.oProjByHead = ByHead::Off;
    else
      return error(flag + " must be on, auto or off, got '" + value + "'");
    return true;
  }
  // Past 1024 rows a step is a prompt, not a chunk of one (kMaxStepRows).
  if (flag == "--prefill-chunk") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    if (*parsed < 2 || *parsed > kMaxStepRows)
      return error(flag + " must be from 2 to " + llvm::Twine(kMaxStepRows) + " tokens, got " +
                   value);
    options.prefillChunk = *parsed;
    return true;
  }
  if (flag == "--tensor-parallel") {
    auto parsed = positive(flag, value);
    if (!parsed)
      return parsed.takeError();
    if (*parsed > 64)
      return error(flag + " must be at most 64 ranks, got " + value);
    options.tensorParallel = *parsed;
    return true;
  }
  if (flag == "--batch") {
    llvm::SmallVector<llvm::StringRef> sizes;
    value.split(sizes, ',');
    options.batchSizes.clear();
    for (llvm::StringRef size : sizes) {
      auto parsed = positive(flag, size);
      if (!parsed)
        return parsed.takeError();
      if (*parsed < 2 || *parsed > kMaxStepRows)
        return error(flag + " sizes must be from 2 to " + llvm::Twine(kMaxStepRows) +
                     " sequences, got " + size);
      if (llvm::is_contained(options.batchSizes, *parsed))
        return error(flag + " names batch size " + size + " twice");
      options.batchSizes.push_back(*parsed);
    }
    return true;
  }
  return false;
}

} // namespace mk
