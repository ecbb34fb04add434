#include "runtime/gpu/Prefill.h"

#include "runtime/format/PrefillArgs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mk {

namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;
// Logits a pass may hold: a 128k vocabulary keeps ~2000 rows a pass.
constexpr uint64_t kMaxLogitBytes = uint64_t(1) << 30;

// The rows a pass's GEMMs take: its rows rounded up to a power of two (at
// least 64), so that a few shapes cover every prompt and load() can have
// cuBLASLt choose and load their kernels beforehand (warmUp). The rows past
// the pass's are computed and never read.
int64_t gemmRows(int64_t rows) {
  int64_t padded = 64;
  while (padded < rows)
    padded *= 2;
  return padded;
}

// Attention's multiply-adds counted causally, as the profile reports them:
// row r's q . k and P v over its firstPosition + r + 1 positions, every head.
double causalFlops(const Operation &op, uint64_t rows, int64_t firstPosition) {
  double keys = double(rows) * double(firstPosition) + double(rows) * double(rows + 1) / 2;
  if (op.window > 0) { // each row's last `window` positions only
    keys = 0;
    for (uint64_t r = 0; r < rows; ++r)
      keys += double(std::min<int64_t>(firstPosition + int64_t(r) + 1, op.window));
  }
  return 4.0 * double(op.headDim) * double(op.numHeads) * keys;
}

CUdeviceptr offsetOrZero(CUdeviceptr base, uint64_t offset, uint64_t elementBytes) {
  return offset == MK_NO_OFFSET ? 0 : base + offset * elementBytes;
}

} // namespace

struct GpuPrefill::Gemm {
  const CublasLt &blas;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t weight = nullptr, input = nullptr, output = nullptr;
  cublasLtMatmulAlgo_t algo{};
  explicit Gemm(const CublasLt &blas) : blas(blas) {}
  ~Gemm() {
    if (desc)
      blas.cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t layout : {weight, input, output})
      if (layout)
        blas.cublasLtMatrixLayoutDestroy(layout);
  }
};

std::unique_ptr<GpuPrefill> GpuPrefill::create(const CudaDriver &cuda, const PrefillModel &model,
                                               const TaskGraph &decodeGraph,
                                               std::span<const MkOperationRecord> records,
                                               std::string &whyNot) {
  const CublasLt *blas = CublasLt::load(whyNot);
  if (!blas)
    return nullptr;
  if (records.size() != decodeGraph.operations.size()) {
    whyNot = "the blob's operations are not the graph's";
    return nullptr;
  }
  CUdeviceptr abiAddress = 0;
  size_t abiBytes = 0;
  unsigned abi = 0;
  if (cuda.cuModuleGetGlobal(&abiAddress, &abiBytes, model.module, MK_PREFILL_ABI_NAME) !=
          CUDA_SUCCESS ||
      abiBytes != sizeof abi || cuda.cuMemcpyDtoH(&abi, abiAddress, sizeof abi) != CUDA_SUCCESS ||
      abi != MK_PREFILL_ABI_VERSION) {
    whyNot = "the file's kernel has no prompt kernels of version " +
             std::to_string(MK_PREFILL_ABI_VERSION) + " (compiled by an older mkc)";
    return nullptr;
  }
  std::unique_ptr<GpuPrefill> prefill(
      new GpuPrefill(cuda, *blas, model, promptGraph(decodeGraph), records));
  // From here on the graph as prompts run it (PrefillPlan.h: promptGraph).
  const TaskGraph &graph = prefill->graph;
  if (!planPrefill(graph, false, prefill->prompt, whyNot) ||
      !planPrefill(graph, true, prefill->withLogits, whyNot))
    return nullptr;
  prefill->embed = prefill->function(MK_PREFILL_EMBED_NAME);
  prefill->norm = prefill->function(MK_PREFILL_NORM_NAME);
  prefill->epilogue = prefill->function(MK_PREFILL_EPILOGUE_NAME);
  prefill->argmax = prefill->function(MK_PREFILL_ARGMAX_NAME);
  if (!prefill->embed || !prefill->norm || !prefill->epilogue || !prefill->argmax) {
    whyNot = "the file's kernel lacks a prompt kernel";
    return nullptr;
  }
  for (size_t index = 0; index < graph.operations.size(); ++index) {
    const Operation &op = graph.operations[index];
    if (op.kind != OpKind::Attention)
      continue;
    // (The prompt attention takes the max of the unscaled scores.)
    if (!(records[index].scale > 0.0f)) {
      whyNot = "attention '" + op.name + "' scales its scores by " +
               std::to_string(records[index].scale) + "; the prompt kernels take positive scales";
      return nullptr;
    }
    uint64_t cacheBytes = bytesPerElement(graph.buffers[op.keyCache].element);
    CUfunction prepare =
        prefill->function(mkPrefillKernelName(MK_PREFILL_PREPARE_PREFIX, op.headDim, cacheBytes));
    CUfunction attend =
        prefill->function(mkPrefillKernelName(MK_PREFILL_ATTENTION_PREFIX, op.headDim, cacheBytes));
    if (!prepare || !attend) {
      whyNot = "the prompt kernels take heads of whole " +
               std::to_string(MK_PREFILL_HEAD_DIM_UNIT) + " dimensions up to " +
               std::to_string(MK_PREFILL_MAX_HEAD_DIM) + "; attention '" + op.name + "' has " +
               std::to_string(op.headDim);
      return nullptr;
    }
    if (cuda.cuFuncSetAttribute(attend, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                MK_PREFILL_ATTENTION_SHARED_BYTES(op.headDim)) != CUDA_SUCCESS) {
      whyNot = "the prompt's attention cannot have its shared memory on this device";
      return nullptr;
    }
    prefill->attention[{op.headDim, cacheBytes}] = {prepare, attend};
  }
  prefill->chooseAttention();
  if (blas->cublasLtCreate(&prefill->handle) != CUBLAS_STATUS_SUCCESS) {
    whyNot = "cuBLASLt could not start on this device";
    return nullptr;
  }
  for (uint32_t index : prefill->withLogits.operations)
    if (graph.operations[index].output == prefill->withLogits.logits)
      prefill->logitsOperation = index;
  for (auto [memory, bytes, what] :
       {std::tuple{&prefill->workspace, kWorkspaceBytes, "the GEMM workspace"},
        std::tuple{&prefill->lastLogits,
                   size_t(graph.operations[prefill->logitsOperation].outputLength) * 4,
                   "the prompt's last logits"},
        std::tuple{&prefill->picked, size_t(8), "the prompt's first token"}}) {
    whyNot = memory->allocate(cuda, bytes, what);
    if (!whyNot.empty())
      return nullptr;
  }
  return prefill;
}

GpuPrefill::GpuPrefill(const CudaDriver &cuda, const CublasLt &blas, const PrefillModel &model,
                       TaskGraph graph, std::span<const MkOperationRecord> records)
    : cuda(cuda), blas(blas), model(model), graph(std::move(graph)),
      records(records.begin(), records.end()),
      profile(cuda) {}

GpuPrefill::~GpuPrefill() {
  gemms.clear();
  if (handle)
    blas.cublasLtDestroy(handle);
}

void GpuPrefill::chooseAttention() {
  // Measured on the H200 (bench/results/2026-12-05-h200-checks, call B):
  // cuDNN's is faster at every prompt length, 373.6 -> 296.3 ms at 32000
  // tokens on the Llama-3.2-1B shape, so it is taken wherever it can run
  // ("auto"); "cudnn" insists (the note says why not), "own" declines.
  const char *asked = std::getenv("MKRT_PREFILL_ATTENTION");
  const std::string choice = asked && *asked ? asked : "auto";
  if (choice == "own")
    return;
  if (choice != "cudnn" && choice != "auto") {
    attentionNote = "the prompt kernels' attention (MKRT_PREFILL_ATTENTION is '" + choice +
                    "', none of auto, cudnn and own)";
    return;
  }
  std::string whyNot;
  for (const Operation &op : graph.operations) {
    if (op.kind != OpKind::Attention || !whyNot.empty())
      continue;
    if (graph.buffers[op.keyCache].element != BufferElement::BF16)
      whyNot = "attention '" + op.name + "' keeps f32 caches; cuDNN's takes bf16 ones "
               "(mkc compile --kv-cache=bf16)";
    else if (op.window > 0)
      whyNot = "attention '" + op.name + "' has a sliding window of " +
               std::to_string(op.window) + " positions, which the cuDNN graph here does not mask";
  }
  if (whyNot.empty())
    cudnn = CudnnAttention::create(cuda, whyNot);
  // A shape cuDNN refuses is found here, not in the first prompt: each
  // attention's graph for the shortest passes (warmUp builds the rest).
  for (size_t index = 0; cudnn && index < graph.operations.size(); ++index)
    if (graph.operations[index].kind == OpKind::Attention &&
        !cudnn->prepare(cudnnShape(graph.operations[index], records[index], graph.maxContext),
                         gemmRows(1), whyNot))
      cudnn.reset();
  if (cudnn)
    attentionNote = cudnn->describe();
  else if (choice == "cudnn")
    attentionNote = "the prompt kernels' attention (MKRT_PREFILL_ATTENTION=cudnn: " + whyNot + ")";
}

CudnnAttentionShape GpuPrefill::cudnnShape(const Operation &op, const MkOperationRecord &record,
                                           int64_t capacity) const {
  return {op.numHeads, op.numKvHeads, op.headDim, capacity, record.scale};
}

CUfunction GpuPrefill::function(const std::string &name) const {
  CUfunction function = nullptr;
  return cuda.cuModuleGetFunction(&function, model.module, name.c_str()) == CUDA_SUCCESS
             ? function
             : nullptr;
}

bool GpuPrefill::check(CUresult result, const char *what, std::string &error) const {
  if (result == CUDA_SUCCESS)
    return true;
  error = std::string(what) + ": " + cuda.describe(result);
  return false;
}

bool GpuPrefill::checkBlas(cublasStatus_t status, const char *what, std::string &error) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  error = std::string(what) + ": " + blas.describe(status);
  return false;
}

bool GpuPrefill::launch(CUfunction function, unsigned gridX, unsigned gridY, unsigned threads,
                        const void *args, const char *what, std::string &error,
                        unsigned sharedBytes, double flops) {
  void *params[] = {const_cast<void *>(args)};
  profile.begin(what, flops);
  CUresult result = cuda.cuLaunchKernel(function, gridX, gridY, 1, threads, 1, 1, sharedBytes,
                                        nullptr, params, nullptr);
  profile.end();
  return check(result, what, error);
}

// output[r][j] (row stride outputStride, f32, or bf16 with `bf16Output`) =
// sum_k input[r][k] weight[j][k] (+ accumulate[r][j], same stride, when
// given): in cuBLAS's column-major terms D (n x rows) = W^T (n x k) X (k x
// rows) + beta C.
bool GpuPrefill::gemm(CUdeviceptr weight, CUdeviceptr input, CUdeviceptr output, uint64_t n,
                      uint64_t k, uint64_t rows, uint64_t outputStride, std::string &error,
                      CUdeviceptr accumulate, bool bf16Output) {
  auto key = std::make_tuple(n, k, rows, outputStride, bf16Output);
  auto found = gemms.find(key);
  if (found == gemms.end()) {
    auto made = std::make_unique<Gemm>(blas);
    cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
    cublasLtMatmulPreference_t preference = nullptr;
    uint64_t workspaceBytes = kWorkspaceBytes;
    cublasLtMatmulHeuristicResult_t heuristic{};
    int results = 0;
    bool ok =
        checkBlas(blas.cublasLtMatmulDescCreate(&made->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                  "creating a GEMM", error) &&
        checkBlas(blas.cublasLtMatmulDescSetAttribute(made->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                      &transposed, sizeof transposed),
                  "setting a GEMM's transpose", error) &&
        checkBlas(blas.cublasLtMatmulDescSetAttribute(made->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                      &plain, sizeof plain),
                  "setting a GEMM's transpose", error) &&
        checkBlas(blas.cublasLtMatrixLayoutCreate(&made->weight, CUDA_R_16BF, k, n, k),
                  "describing a GEMM's weights", error) &&
        checkBlas(blas.cublasLtMatrixLayoutCreate(&made->input, CUDA_R_16BF, k, rows, k),
                  "describing a GEMM's input", error) &&
        checkBlas(blas.cublasLtMatrixLayoutCreate(&made->output,
                                                  bf16Output ? CUDA_R_16BF : CUDA_R_32F, n, rows,
                                                  outputStride),
                  "describing a GEMM's output", error) &&
        checkBlas(blas.cublasLtMatmulPreferenceCreate(&preference), "creating a preference",
                  error) &&
        checkBlas(blas.cublasLtMatmulPreferenceSetAttribute(
                      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
                      sizeof workspaceBytes),
                  "setting the workspace", error) &&
        checkBlas(blas.cublasLtMatmulAlgoGetHeuristic(handle, made->desc, made->weight, made->input,
                                                      made->output, made->output, preference, 1,
                                                      &heuristic, &results),
                  "choosing a GEMM algorithm", error);
    if (preference)
      blas.cublasLtMatmulPreferenceDestroy(preference);
    if (!ok)
      return false;
    if (results < 1) {
      error = "cuBLASLt has no algorithm for a bf16 GEMM of " + std::to_string(n) + " x " +
              std::to_string(k) + " by " + std::to_string(rows) + " rows";
      return false;
    }
    made->algo = heuristic.algo;
    found = gemms.emplace(key, std::move(made)).first;
  }
  const Gemm &g = *found->second;
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const CUdeviceptr c = accumulate ? accumulate : output;
  profile.begin("a prompt's GEMM", 2.0 * double(n) * double(k) * double(rows));
  cublasStatus_t status = blas.cublasLtMatmul(
      handle, g.desc, &one, reinterpret_cast<void *>(weight), g.weight,
      reinterpret_cast<void *>(input), g.input, &beta, reinterpret_cast<void *>(c), g.output,
      reinterpret_cast<void *>(output), g.output, &g.algo,
      reinterpret_cast<void *>(workspace.get()), kWorkspaceBytes, nullptr);
  profile.end();
  return checkBlas(status, "a GEMM", error);
}

bool GpuPrefill::reserve(const PrefillPlan &plan, int64_t rows, std::string &error) {
  if (reservedFor == &plan && reservedRows >= rows)
    return true;
  const uint64_t padded = gemmRows(rows);
  for (auto [memory, bytes, what] :
       {std::tuple{&arena, plan.arenaFloatsPerRow * 4 * padded, "the prompt's activations"},
        std::tuple{&gemmInput, plan.gemmInputPerRow * 2 * padded, "the GEMMs' inputs"},
        std::tuple{&gemmOutput, plan.gemmOutputPerRow * 4 * padded, "the GEMMs' outputs"},
        std::tuple{&queries, plan.queriesPerRow * 2 * padded, "the prompt's queries"},
        std::tuple{&tokenRows, uint64_t(8) * rows, "the prompt's tokens"}}) {
    error = memory->allocate(cuda, bytes, what);
    if (!error.empty())
      return false;
  }
  reservedFor = &plan;
  reservedRows = rows;
  return true;
}

std::string GpuPrefill::checkCaches(std::span<const GpuCacheSlots> caches, int64_t end) const {
  if (caches.empty())
    return "";
  size_t index = 0;
  for (const Operation &op : graph.operations) {
    if (op.kind != OpKind::Attention)
      continue;
    if (index == caches.size())
      return "caches for " + std::to_string(caches.size()) + " attention operations; this "
             "model has more";
    const GpuCacheSlots &slots = caches[index++];
    const uint64_t element = bytesPerElement(graph.buffers[op.keyCache].element);
    if (slots.kvHeads != op.numKvHeads || slots.headDim != op.headDim ||
        slots.elementBytes != element || slots.positions < end || !slots.keys || !slots.values)
      return "the caches given for attention '" + op.name + "' hold " +
             std::to_string(slots.positions) + " positions of " + std::to_string(slots.kvHeads) +
             " x " + std::to_string(slots.headDim) + " elements of " +
             std::to_string(slots.elementBytes) + " bytes; it needs " + std::to_string(end) +
             " of " + std::to_string(op.numKvHeads) + " x " + std::to_string(op.headDim) +
             " of " + std::to_string(element);
  }
  if (index != caches.size())
    return "caches for " + std::to_string(caches.size()) + " attention operations; this model "
           "has " + std::to_string(index);
  return "";
}

bool GpuPrefill::run(std::span<const int64_t> tokens, int64_t firstPosition,
                     std::vector<float> *logits, int64_t maxRows, std::string &error,
                     std::span<const GpuCacheSlots> caches) {
  if (error = checkCaches(caches, firstPosition + static_cast<int64_t>(tokens.size()));
      !error.empty())
    return false;
  const PrefillPlan &plan = logits ? withLogits : prompt;
  int64_t rows = maxRows > 0 ? maxRows : kMaxRows;
  if (logits)
    rows = std::min<int64_t>(rows, std::max<uint64_t>(1, kMaxLogitBytes / (model.vocab * 4)));
  rows = std::max<int64_t>(1, std::min<int64_t>(rows, static_cast<int64_t>(tokens.size())));
  if (logits)
    logits->assign(tokens.size() * model.vocab, 0.0f);
  if (!check(cuda.cuCtxSynchronize(), "waiting for the device before a prompt", error) ||
      !reserve(plan, rows, error))
    return false;
  lastRows = rows;
  for (size_t start = 0; start < tokens.size(); start += rows) {
    std::span<const int64_t> part = tokens.subspan(start, std::min<size_t>(rows, tokens.size() - start));
    if (!pass(plan, part, firstPosition + static_cast<int64_t>(start),
              logits ? logits->data() + start * model.vocab : nullptr, caches, error))
      return false;
  }
  return check(cuda.cuCtxSynchronize(), "the prompt's kernels", error);
}

void GpuPrefill::printProfile(int64_t rows) {
  if (!profile.enabled())
    return;
  if (std::string line = profile.report(rows); !line.empty())
    std::fprintf(stderr, "%s\n", line.c_str());
}

bool GpuPrefill::warmUp(int64_t positions, std::string &error) {
  const int64_t longest = std::min(kMaxRows, positions);
  bool ok = true;
  for (int64_t padded = 64; ok; padded *= 2) {
    std::vector<int64_t> zeros(std::min(padded, longest), 0);
    ok = run(zeros, 0, nullptr, 0, error);
    if (padded >= longest)
      break;
  }
  int64_t token = 0;
  ok = ok && (!picksFirstToken() || firstToken(token, error));
  if (ok && profile.enabled())
    profile.report(0); // (the warm-up's launches are not a prompt's)
  return ok;
}

bool GpuPrefill::gemv(const Operation &op, const MkOperationRecord &record, CUdeviceptr input,
                      CUdeviceptr residual, CUdeviceptr output, uint64_t rows, uint64_t padded,
                      std::string &error, bool feedsNext, bool inputReady) {
  if (!inputReady) {
    MkPrefillNormArgs normArgs{input, gemmInput.get(), offsetOrZero(model.params, record.norm, 4),
                               rows, op.inputLength, record.eps, 0};
    if (!launch(norm, static_cast<unsigned>(rows), 1, MK_PREFILL_THREADS, &normArgs,
                "a prompt's GEMM input", error))
      return false;
  }
  uint64_t stacked = 0;
  for (uint32_t i = 0; i < record.numWeights; ++i)
    stacked += record.weightRows[i];
  // Without a bias or an epilogue the GEMMs write the output itself; so
  // they do with a residual, which they add (beta = 1).
  const bool direct = (op.epilogue == Epilogue::None || op.epilogue == Epilogue::Residual) &&
                      record.bias == MK_NO_OFFSET;
  CUdeviceptr products = direct ? output : gemmOutput.get();
  // A SiLU-mul's products go to bf16, as the next GEMM's input does: its
  // epilogue reads half the bytes (the gate's and up's 2 x intermediate a
  // row), which at long prompts took 11 of 296 ms at 32000 tokens.
  const bool bf16Products = isGated(op.epilogue);
  const uint64_t productBytes = bf16Products ? 2 : 4;
  const CUdeviceptr accumulate = direct && op.epilogue == Epilogue::Residual ? residual : 0;
  // Weights stored one after the other (q, k and v; gate and up) are one
  // GEMM: fewer launches, and wider ones.
  for (uint32_t i = 0, column = 0; i < record.numWeights;) {
    uint64_t together = record.weightRows[i];
    uint32_t j = i + 1;
    for (; j < record.numWeights &&
           record.weights[j] == record.weights[i] + together * op.inputLength;
         ++j)
      together += record.weightRows[j];
    if (!gemm(model.weights + record.weights[i] * 2, gemmInput.get(),
              products + column * productBytes, together, op.inputLength, padded, stacked, error,
              accumulate ? accumulate + column * 4 : 0, bf16Products))
      return false;
    column += static_cast<uint32_t>(together);
    i = j;
  }
  if (direct)
    return true;
  MkPrefillEpilogueArgs args{products,
                             offsetOrZero(model.params, record.bias, 4),
                             residual,
                             output,
                             feedsNext ? gemmInput.get() : 0,
                             rows,
                             op.outputLength,
                             stacked,
                             record.epilogue,
                             bf16Products ? 1u : 0u};
  unsigned blocks = static_cast<unsigned>((op.outputLength + 4 * MK_PREFILL_THREADS - 1) /
                                          (4 * MK_PREFILL_THREADS));
  return launch(epilogue, blocks, static_cast<unsigned>(rows), MK_PREFILL_THREADS, &args,
                "a prompt's epilogue", error);
}

bool GpuPrefill::firstToken(int64_t &token, std::string &error) {
  if (reservedFor != &prompt || lastPassRows == 0) {
    error = "the prompt's first token follows a run of the prompt without logits";
    return false;
  }
  // The last row of a buffer the prompt's plan wrote (its rows `padded`
  // apart, as in pass()).
  auto lastRow = [&](uint32_t id) {
    return arena.get() + prompt.arenaOffset[id] * lastPassPadded * 4 +
           (lastPassRows - 1) * prompt.rowLength[id] * 4;
  };
  const Operation &op = graph.operations[logitsOperation];
  unsigned chosen[2] = {0, 0};
  MkPrefillArgmaxArgs args{lastLogits.get(), picked.get(), op.outputLength};
  if (!picksFirstToken()) {
    error = "the logits' Gemv '" + op.name + "' adds a residual, which the prompt does not keep";
    return false;
  }
  if (!gemv(op, records[logitsOperation], lastRow(op.input), 0, lastLogits.get(), 1, 1, error) ||
      !launch(argmax, 1, 1, MK_PREFILL_ARGMAX_THREADS, &args, "the prompt's first token", error) ||
      !check(cuda.cuMemcpyDtoH(chosen, picked.get(), sizeof chosen), "copying the first token",
             error))
    return false;
  if (chosen[1] != 0xffffffffu) {
    error = "MK_ERROR_NON_FINITE_LOGIT: logit " + std::to_string(chosen[1]) +
            " of the prompt's last position is NaN or infinite";
    return false;
  }
  token = chosen[0];
  return true;
}

// Every operation of the plan over the pass's rows, in order, on the
// default stream (so the decode kernel launched next sees the caches).
bool GpuPrefill::pass(const PrefillPlan &plan, std::span<const int64_t> tokens,
                      int64_t firstPosition, float *logits, std::span<const GpuCacheSlots> caches,
                      std::string &error) {
  const uint64_t rows = tokens.size(), padded = gemmRows(static_cast<int64_t>(rows));
  lastPassRows = rows;
  lastPassPadded = padded;
  if (!check(cuda.cuMemcpyHtoD(tokenRows.get(), tokens.data(), rows * sizeof(int64_t)),
             "copying the prompt's tokens", error) ||
      (cudnn && !cudnn->setLengths(static_cast<int64_t>(rows), firstPosition, error)))
    return false;
  // Buffer b holds `padded` rows at arenaOffset[b] * padded (the GEMMs
  // write them all); the other kernels take the pass's rows.
  auto buffer = [&](uint32_t id) { return arena.get() + plan.arenaOffset[id] * padded * 4; };
  for (size_t step = 0; step < plan.operations.size(); ++step) {
    const uint32_t index = plan.operations[step];
    const Operation &op = graph.operations[index];
    const MkOperationRecord &record = records[index];
    // An operation that feeds the next Gemv writes its GEMM input (that
    // Gemv then runs no norm) and, where no one else reads it, no output.
    const bool feedsNext = plan.feedsNextGemm[step];
    const bool inputReady = step > 0 && plan.feedsNextGemm[step - 1];
    const CUdeviceptr output = plan.writesOutput[step] ? buffer(op.output) : 0;
    if (op.kind == OpKind::Embed) {
      MkPrefillEmbedArgs args{model.weights + record.weights[0] * 2, tokenRows.get(),
                              buffer(op.output), rows, plan.rowLength[op.output]};
      if (!launch(embed, rows, 1, MK_PREFILL_THREADS, &args, "the prompt's embed", error))
        return false;
    } else if (op.kind == OpKind::Gemv) {
      if (!gemv(op, record, buffer(op.input),
                op.epilogue == Epilogue::Residual ? buffer(op.residual) : 0, output, rows, padded,
                error, feedsNext, inputReady))
        return false;
    } else if (op.kind == OpKind::Attention) {
      auto [prepare, attend] =
          attention.at({op.headDim, bytesPerElement(graph.buffers[op.keyCache].element)});
      CUdeviceptr keys = model.kv + record.keyCache * 4, values = model.kv + record.valueCache * 4;
      // Each KV head's positions in the slots written and read: the layout
      // of core/protocol/AttentionLayout.h's cacheEntry.
      int64_t capacity = graph.maxContext;
      if (!caches.empty()) {
        // The caches are one per attention operation in the graph's order.
        const size_t ordinal = static_cast<size_t>(
            std::count_if(graph.operations.begin(), graph.operations.begin() + index,
                          [](const Operation &o) { return o.kind == OpKind::Attention; }));
        keys = caches[ordinal].keys;
        values = caches[ordinal].values;
        capacity = caches[ordinal].positions;
      }
      MkPrefillPrepareArgs prepareArgs{buffer(op.input),
                                       queries.get(),
                                       keys,
                                       values,
                                       offsetOrZero(model.params, record.qNorm, 4),
                                       offsetOrZero(model.params, record.kNorm, 4),
                                       offsetOrZero(model.params, record.invFreq, 4),
                                       rows,
                                       firstPosition,
                                       static_cast<uint64_t>(op.numHeads),
                                       static_cast<uint64_t>(op.numKvHeads),
                                       static_cast<uint64_t>(capacity),
                                       static_cast<uint64_t>(op.rotaryDim),
                                       record.interleaved,
                                       record.eps};
      unsigned headBlocks = static_cast<unsigned>(
          (op.numHeads + 2 * op.numKvHeads + MK_PREFILL_PREPARE_HEADS - 1) / MK_PREFILL_PREPARE_HEADS);
      if (!launch(prepare, headBlocks, rows, 32 * MK_PREFILL_PREPARE_HEADS, &prepareArgs,
                  "a prompt's q, k and v", error))
        return false;
      // cuDNN's attention writes bf16 only: the next Gemv's input.
      if (cudnn && feedsNext) {
        profile.begin("a prompt's attention", causalFlops(op, rows, firstPosition));
        const bool ran =
            cudnn->run(cudnnShape(op, record, capacity), static_cast<int64_t>(padded),
                       queries.get(), keys, values, gemmInput.get(), error);
        profile.end();
        if (!ran)
          return false;
        continue;
      }
      MkPrefillAttentionArgs args{queries.get(),
                                  keys,
                                  values,
                                  feedsNext ? gemmInput.get() : output,
                                  rows,
                                  firstPosition,
                                  static_cast<uint64_t>(op.numHeads),
                                  static_cast<uint64_t>(op.numKvHeads),
                                  static_cast<uint64_t>(capacity),
                                  record.scale,
                                  feedsNext ? 1u : 0u,
                                  static_cast<uint32_t>(op.window)};
      const uint64_t queryRows = rows * static_cast<uint64_t>(op.numHeads / op.numKvHeads);
      unsigned tiles = static_cast<unsigned>((queryRows + MK_PREFILL_ATTENTION_ROWS - 1) /
                                             MK_PREFILL_ATTENTION_ROWS);
      if (!launch(attend, static_cast<unsigned>(op.numKvHeads), tiles,
                  32 * MK_PREFILL_ATTENTION_WARPS(op.headDim), &args, "a prompt's attention", error,
                  MK_PREFILL_ATTENTION_SHARED_BYTES(op.headDim), causalFlops(op, rows, firstPosition)))
        return false;
    }
  }
  if (logits && plan.logits != kNoBuffer)
    return check(cuda.cuMemcpyDtoH(logits, buffer(plan.logits), rows * model.vocab * 4),
                 "copying the prompt's logits", error);
  return true;
}

} // namespace mk
