// The CPU engine: the validated task graph run by runtime/cpu's executor on
// the artifact's bf16 weights as the file's mapping holds them, widened to
// f32 a tile at a time as the GPU kernel widens them: a model is held once,
// by the page cache, not again as f32. When the artifact holds a prefill
// chunk (its ROWSTEPS section), prompts and logits go through it a chunk of
// positions a step, with the same bits as decode steps. When it holds the
// ranks of tensor parallelism (RANKS), a generation or teacher forcing from
// position 0 in a new context runs every rank together, as the GPUs would;
// the rest (a kept context, a start position, a trace) the decode graph.
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/cpu/TensorParallelExecutor.h"
#include "runtime/format/WeightPacking.h"
#include "runtime/mkrt/Engine.h"

#include <algorithm>
#include <thread>

namespace mk::rt {

namespace {

class CpuEngine : public Engine {
public:
  explicit CpuEngine(const Artifact &artifact)
      : artifact(artifact), weights(viewWeights(artifact.weights, artifact.weightData)) {
    addWeightSlices(weights, artifact.weightSlices);
    // One thread per emulated SM only when the machine has the cores: on
    // fewer, spinning threads mostly wait on each other, and the
    // single-thread mode gives the same bits.
    uint64_t queues = uint64_t(artifact.schedule.numSms) * std::max<size_t>(1, artifact.ranks.size());
    options.threaded = std::thread::hardware_concurrency() >= queues;
    // loadArtifact has run the whole validator on this graph.
    options.validateDataflow = false;
  }

  std::string describe() const override {
    std::string queues = std::to_string(artifact.schedule.numSms) + " SM queues";
    if (!artifact.ranks.empty())
      queues = std::to_string(artifact.ranks.size()) + " ranks of " + queues;
    return options.threaded ? "cpu (" + queues + ", one thread each)"
                            : "cpu (" + queues + " interleaved on one thread)";
  }

private:
  // A fresh executor per call: a new context, its cache all zeros, from
  // `firstPosition`; or, with `keepCache`, the one executor kept for such
  // calls, whose cache holds what the earlier ones wrote.
  template <class Body>
  auto run(Body &&body, int64_t firstPosition, bool trace = false, bool keepCache = false) {
    try {
      if (!keepCache) {
        CpuExecutorOptions launch = options;
        launch.trace = trace;
        std::unique_ptr<CpuExecutor> executor = makeExecutor(launch);
        executor->startAt(firstPosition);
        return body(*executor);
      }
      if (!kept)
        kept = makeExecutor(options);
      kept->setTrace(trace);
      kept->startAt(firstPosition);
      return body(*kept);
    } catch (const ExecutionError &error) {
      // A failed executor refuses further work: the next kept call starts
      // on a new one (libmkrt ends the continued context on any failure).
      if (keepCache)
        kept.reset();
      throw EngineError(MKRT_ERROR_EXECUTION, error.what());
    }
  }

  std::unique_ptr<CpuExecutor> makeExecutor(const CpuExecutorOptions &launch) const {
    auto executor =
        std::make_unique<CpuExecutor>(artifact.graph, artifact.schedule, weights, launch);
    for (const ScheduledGraph &step : artifact.rowSteps)
      if (step.graph.sequences == 1)
        executor->addPrefillGraph(step.graph, step.schedule);
    return executor;
  }

  // Every rank of the RANKS section in one launch, for a new context at 0.
  bool usesRanks(int64_t firstPosition, bool trace, bool keepCache) const {
    return !artifact.ranks.empty() && firstPosition == 0 && !trace && !keepCache;
  }

  template <class Body> auto runRanks(Body &&body) {
    try {
      TensorParallelExecutor executor(artifact.ranks, weights, options);
      return body(executor);
    } catch (const ExecutionError &error) {
      throw EngineError(MKRT_ERROR_EXECUTION, error.what());
    }
  }

public:
  Generation generate(const std::vector<int64_t> &prompt, int64_t newTokens,
                      int64_t firstPosition, bool trace, bool keepCache,
                      const TokenPicking &picking) override {
    Generation generation;
    GenerateOptions options;
    options.sampling = picking.sampling;
    options.eosTokens = artifact.facts.eosTokens;
    options.onToken = picking.onToken;
    if (usesRanks(firstPosition, trace, keepCache) && newTokens > 0) {
      std::vector<int64_t> tokens = runRanks([&](TensorParallelExecutor &executor) {
        std::vector<int64_t> generated = executor.generate(prompt, newTokens, options);
        generation.steps = executor.position();
        generation.stoppedByHost = executor.lastStop().byHost;
        std::span<const double> stepMs = executor.stepMilliseconds();
        generation.stepMs.assign(stepMs.begin(), stepMs.end());
        return generated;
      });
      generation.tokens =
          cutAtEos(std::move(tokens), artifact.facts.eosTokens, generation.stoppedAtEos);
      return generation;
    }
    std::vector<int64_t> tokens = run(
        [&](CpuExecutor &executor) {
          std::vector<int64_t> generated = executor.generate(prompt, newTokens, options);
          generation.stoppedByHost = executor.lastStop().byHost;
          generation.steps = executor.position() - firstPosition;
          std::span<const double> stepMs = executor.stepMilliseconds();
          generation.stepMs.assign(stepMs.begin(), stepMs.end());
          // The CPU's trace counts from the launch's start.
          std::span<const uint64_t> times = executor.trace();
          generation.trace.times.assign(times.begin(), times.end());
          return generated;
        },
        firstPosition, trace, keepCache);
    generation.tokens =
        cutAtEos(std::move(tokens), artifact.facts.eosTokens, generation.stoppedAtEos);
    return generation;
  }

  std::vector<float> evalLogits(const std::vector<int64_t> &tokens, int64_t firstPosition,
                                bool keepCache) override {
    if (usesRanks(firstPosition, false, keepCache))
      return runRanks([&](TensorParallelExecutor &executor) {
        std::vector<float> logits;
        for (int64_t token : tokens) {
          std::vector<float> row = executor.step(token);
          logits.insert(logits.end(), row.begin(), row.end());
        }
        return logits;
      });
    return run(
        [&](CpuExecutor &executor) {
          if (executor.prefillRows() > 0 && tokens.size() > 1)
            return executor.prefill(tokens, /*everyPosition=*/true);
          std::vector<float> logits;
          for (int64_t token : tokens) {
            std::vector<float> row = executor.step(token);
            logits.insert(logits.end(), row.begin(), row.end());
          }
          return logits;
        },
        firstPosition, false, keepCache);
  }

  BatchGeneration generateBatch(const std::vector<std::vector<int64_t>> &prompts,
                                int64_t newTokens, int64_t firstPosition, bool trace,
                                const TokenPicking &picking) override {
    const ScheduledGraph *batch = nullptr;
    BatchGeneration result;
    for (size_t i = 0; i < artifact.rowSteps.size(); ++i) {
      const ScheduledGraph &step = artifact.rowSteps[i];
      if (step.graph.sequences > 1 && step.graph.rows >= static_cast<int64_t>(prompts.size()) &&
          (!batch || step.graph.rows < batch->graph.rows)) {
        batch = &step;
        result.rowStep = i;
      }
    }
    if (!batch)
      throw EngineError(MKRT_ERROR_UNSUPPORTED,
                        "the file holds no batch of " + std::to_string(prompts.size()) +
                            " or more sequences (mkc compile --batch=B makes one)");
    GenerateOptions generate;
    generate.sampling = picking.sampling;
    generate.eosTokens = artifact.facts.eosTokens;
    std::vector<std::vector<int64_t>> tokens;
    std::vector<double> stepMs;
    try {
      CpuExecutorOptions launch = options;
      launch.trace = trace;
      CpuExecutor executor(batch->graph, batch->schedule, weights, launch);
      executor.startAt(firstPosition);
      tokens = executor.generateBatch(prompts, newTokens, generate);
      std::span<const double> times = executor.stepMilliseconds();
      stepMs.assign(times.begin(), times.end());
      // The CPU's trace counts from the launch's start.
      std::span<const uint64_t> traced = executor.trace();
      result.trace.times.assign(traced.begin(), traced.end());
    } catch (const ExecutionError &error) {
      throw EngineError(MKRT_ERROR_EXECUTION, error.what());
    }
    std::vector<Generation> &generations = result.sequences;
    generations.resize(prompts.size());
    for (size_t s = 0; s < prompts.size(); ++s) {
      Generation &generation = generations[s];
      generation.tokens =
          cutAtEos(std::move(tokens[s]), artifact.facts.eosTokens, generation.stoppedAtEos);
      generation.steps = static_cast<int64_t>(stepMs.size());
      generation.stepMs = stepMs;
    }
    return result;
  }

private:
  const Artifact &artifact;
  WeightTable weights;
  CpuExecutorOptions options;
  std::unique_ptr<CpuExecutor> kept; // for keepCache calls, made on the first
};

} // namespace

std::unique_ptr<Engine> makeCpuEngine(const Artifact &artifact) {
  return std::make_unique<CpuEngine>(artifact);
}

} // namespace mk::rt
