// mkc eval: teacher-forced logits of a model, one row per token, from one of
// the engines that give the IR its meaning at each stage:
//   reference  the reference interpreter on the imported IR
//   fused      the same interpreter on the IR after the fusion passes
//   schedule   the validated task graph and static schedule, run by the CPU
//              executor (one thread per emulated SM, or --executor=single)
// Any difference between engines is a stage changing the meaning.
#include "compiler/driver/Pipeline.h"
#include "compiler/interpreter/ReferenceInterpreter.h"
#include "core/support/Npy.h"
#include "compiler/tools/Commands.h"
#include "compiler/tools/CommandFiles.h"
#include "passes/Pipeline.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/TensorParallelExecutor.h"
#include "core/support/TokenList.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mk {

const char *const kEvalHelp =
    "usage: mkc eval MODEL --tokens T0,T1,... --logits OUT.npy [options]\n"
    "\n"
    "MODEL is an ONNX model, a GGUF file of the llama family or mk IR.\n"
    "Feeds the tokens one at a time from position 0 and writes the logits after\n"
    "each, [tokens, vocab] float32, as .npy: the contract mkrun --logits follows.\n"
    "\n"
    "options:\n"
    "  --tokens T0,T1,...         the tokens, comma-separated ids\n"
    "  --logits OUT.npy           where the logits go (never the model)\n"
    "  --engine=reference         the reference interpreter on the imported IR (default)\n"
    "  --engine=fused             the interpreter on the IR after the fusion passes\n"
    "  --engine=schedule          the validated schedule on the CPU executor\n"
    "  --executor=threads|single  (schedule) one thread per SM (default), or one thread\n"
    "  --checked                  (schedule) stamp every element with its writer, so that\n"
    "                             a task reading unready data fails with its name\n"
    "  --max-context=N            (schedule) the positions to compile for (default: the\n"
    "                             number of tokens)\n"
    "  --num-sms=N                (schedule) the SMs to schedule for\n"
    "  --prefill-chunk=M          (schedule) feed the tokens M at a time through a\n"
    "                             prefill chunk's steps instead of one a step\n"
    "  --tensor-parallel=N        (schedule) N ranks, each with its share of the heads\n"
    "                             and channels, run together (the logits of rank 0)\n"
    "  -h, --help                 this help\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 the model, a file or a token was refused\n";

namespace {

int refuse(const llvm::Twine &message) {
  llvm::errs() << "mkc: error: " << message << "\n";
  return kRefused;
}

int usageError(const llvm::Twine &message) {
  return mk::usageError("eval", kEvalHelp, message);
}

struct EvalArguments {
  std::string model, tokens, logits, engine = "reference", executor = "threads";
  bool checked = false;
  CompileOptions compile;
};

using Rows = std::vector<std::vector<float>>;

llvm::Error materializeWeights(WeightTable &weights) {
  try {
    weights.materialize();
  } catch (const std::runtime_error &failure) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), failure.what());
  }
  return llvm::Error::success();
}

llvm::Expected<Rows> runInterpreter(mlir::ModuleOp module, const WeightTable &weights,
                                    const std::vector<int64_t> &tokens) {
  auto interpreter =
      ReferenceInterpreter::create(module, weights, static_cast<int64_t>(tokens.size()));
  if (!interpreter)
    return interpreter.takeError();
  Rows rows;
  for (int64_t token : tokens) {
    auto logits = (*interpreter)->step(token);
    if (!logits)
      return logits.takeError();
    rows.push_back(std::move(*logits));
  }
  return rows;
}

llvm::Expected<Rows> runSchedule(mlir::MLIRContext &context, const EvalArguments &args,
                                 const std::vector<int64_t> &tokens) {
  auto compiled = compileToSchedule(context, args.model, args.compile);
  if (!compiled)
    return compiled.takeError();
  // The CPU executor and the interpreter read every weight as f32: a big
  // model's lazy weights are read here (eval is for models that fit).
  if (llvm::Error error = materializeWeights(compiled->imported.weights))
    return std::move(error);
  CpuExecutorOptions options;
  options.threaded = args.executor == "threads";
  options.checked = args.checked;
  try {
    Rows rows;
    // With --tensor-parallel, every rank's graph in one process.
    if (!compiled->ranks.empty()) {
      TensorParallelExecutor executor(compiled->ranks, compiled->imported.weights, options);
      for (int64_t token : tokens)
        rows.push_back(executor.step(token));
      return rows;
    }
    CpuExecutor executor(compiled->tasks, compiled->schedule, compiled->imported.weights,
                         options);
    // With --prefill-chunk, every token through the prefill chunk's steps.
    for (const ScheduledGraph &step : compiled->rowSteps)
      if (step.graph.sequences == 1) {
        executor.addPrefillGraph(step.graph, step.schedule);
        std::vector<float> logits = executor.prefill(tokens, /*everyPosition=*/true);
        size_t vocab = logits.size() / tokens.size();
        for (size_t i = 0; i < tokens.size(); ++i)
          rows.emplace_back(logits.begin() + i * vocab, logits.begin() + (i + 1) * vocab);
        return rows;
      }
    for (int64_t token : tokens)
      rows.push_back(executor.step(token));
    return rows;
  } catch (const ExecutionError &error) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error.what());
  }
}

} // namespace

int evalCommand(int argc, char **argv) {
  EvalArguments args;
  bool maxContextGiven = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> std::optional<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0)
        return arg.substr(prefix.size());
      if (arg == flag && i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    auto compileOption = parseCompileOption(arg, args.compile);
    if (!compileOption)
      return usageError(llvm::toString(compileOption.takeError()));
    if (*compileOption) {
      maxContextGiven |= arg.rfind("--max-context", 0) == 0;
      continue;
    }
    if (auto v = value("--tokens"))
      args.tokens = *v;
    else if (auto v = value("--logits"))
      args.logits = *v;
    else if (auto v = value("--engine"))
      args.engine = *v;
    else if (auto v = value("--executor"))
      args.executor = *v;
    else if (arg == "--checked")
      args.checked = true;
    else if (arg.rfind("--", 0) != 0 && args.model.empty())
      args.model = arg;
    else
      return usageError("unknown argument '" + arg + "'");
  }
  if (args.model.empty())
    return usageError("no model given");
  if (args.tokens.empty() || args.logits.empty())
    return usageError("eval needs --tokens and --logits");
  if (args.engine != "reference" && args.engine != "fused" && args.engine != "schedule")
    return usageError("unknown engine '" + args.engine +
                      "' (available: reference, fused, schedule)");
  if (args.executor != "threads" && args.executor != "single")
    return usageError("unknown executor '" + args.executor + "' (available: threads, single)");
  std::vector<int64_t> tokens;
  if (!parseTokenList(args.tokens, tokens))
    return usageError("--tokens must be a comma-separated list of token ids, got '" +
                      args.tokens + "'");
  if (std::string error = checkInputFile(args.model); !error.empty())
    return refuse(error);
  if (std::string error = checkOutput(args.logits, {args.model}); !error.empty())
    return refuse(error);
  if (!maxContextGiven)
    args.compile.maxContext = static_cast<int64_t>(tokens.size());

  mlir::MLIRContext context;
  llvm::Expected<Rows> rows = Rows{};
  if (args.engine == "schedule") {
    rows = runSchedule(context, args, tokens);
  } else {
    auto imported = importModel(context, args.model);
    if (!imported)
      return refuse(llvm::toString(imported.takeError()));
    if (args.engine == "fused" &&
        mlir::failed(runFusionPipeline(imported->module.get(), false, &imported->weights)))
      return refuse("the fusion pipeline failed on '" + args.model + "'");
    if (llvm::Error error = materializeWeights(imported->weights))
      return refuse(llvm::toString(std::move(error)));
    rows = runInterpreter(imported->module.get(), imported->weights, tokens);
  }
  if (!rows)
    return refuse(llvm::toString(rows.takeError()));

  std::vector<float> flat;
  for (const auto &row : *rows)
    flat.insert(flat.end(), row.begin(), row.end());
  int64_t vocab = rows->empty() ? 0 : static_cast<int64_t>(rows->front().size());
  if (std::string error = writeNpy(args.logits, flat, {static_cast<int64_t>(rows->size()), vocab});
      !error.empty())
    return refuse(error);
  return 0;
}

} // namespace mk
