// The compiler from a model (ONNX or GGUF) to a static schedule, stage by
// stage: import (frontends/onnx, frontends/gguf), fusion (passes/), lowering to tasks, finer
// dependencies, scheduling. `mkc compile` and `mkc inspect` both run it.
#ifndef MKC_COMPILER_DRIVER_PIPELINE_H
#define MKC_COMPILER_DRIVER_PIPELINE_H

#include "compiler/taskgraph/ChunkDependencies.h"
#include "compiler/taskgraph/ShardOperations.h"
#include "compiler/taskgraph/Target.h"
#include "core/taskgraph/TaskGraph.h"
#include "frontends/onnx/DecoderImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mk {

// The most positions --max-context accepts (Pipeline.cpp says why).
constexpr int64_t kMostContext = int64_t{1} << 20;

class CompilePhases;

struct CompileOptions {
  int64_t maxContext = 2048;
  TargetDescription target;
  // Steps of several rows to compile beside decode (docs/m-token-steps.md):
  // a prefill chunk of this many tokens (0: none), and a batch of each size.
  int64_t prefillChunk = 0;
  std::vector<int64_t> batchSizes;
  // Ranks of tensor parallelism (compiler/taskgraph/ShardOperations.h); 1: none.
  int64_t tensorParallel = 1;
  bool printIrAfterAll = false;
  // Told of import, passes, task graph and schedule when set (mkc compile).
  CompilePhases *phases = nullptr;
};

struct CompiledModel {
  ImportedModel imported; // the module after fusion, and its weights
  TaskGraph tasks;        // decode: one row of one sequence a step
  Schedule schedule;
  DependencyReport dependencies;
  // The steps of several rows asked for: the prefill chunk first, then the
  // batches in the order given. Each is validated.
  std::vector<ScheduledGraph> rowSteps;
  // With tensorParallel > 1: every rank's decode graph, rank by rank, all on
  // one schedule, and the slices of the model's weights they name (added to
  // imported.weights when it holds the sources).
  std::vector<ScheduledGraph> ranks;
  std::vector<WeightSlice> weightSlices;
};

// The model at `path` as mk IR and weights: a .mlir file of mk IR (no weight
// values), a GGUF file (known by its magic or a .gguf name), else ONNX.
llvm::Expected<ImportedModel> importModel(mlir::MLIRContext &context, const std::string &path);

// `modelPath` may name a GGUF file, or a .mlir file of mk IR, fused or not (the fusion
// passes leave fused ops alone): the shapes of its mk.weight declarations are
// all lowering needs, so hand-written modules of any model size can be
// scheduled without an exported model. Such a model has no weight values.
llvm::Expected<CompiledModel> compileToSchedule(mlir::MLIRContext &context,
                                                const std::string &modelPath,
                                                const CompileOptions &options);

// Reads one of the options every command that compiles shares:
// --max-context=N (positions of the KV caches), --num-sms=N (the SMs of
// the target), --longest-attention-chunk=N, --least-gemv-tile-bytes=N,
// --kv-cache=f32|bf16,
// --prefill-chunk=M and
// --batch=B[,B...] (steps of several rows) and --tensor-parallel=N. Returns
// false when `arg` is none of them, an error when it is one with a bad value.
llvm::Expected<bool> parseCompileOption(llvm::StringRef arg, CompileOptions &options);

} // namespace mk

#endif
