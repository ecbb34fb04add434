#include "runtime/gpu/CudnnAttention.h"

#include "core/support/SharedLibrary.h"
#include "runtime/gpu/DeviceMemory.h"

#include <cudnn_frontend.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

// The frontend's calls into cuDNN go through this handle of the library
// (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING); openCudnn() sets it.
void *cudnn_frontend::cudnn_dlhandle = nullptr;

namespace mk {

namespace fe = cudnn_frontend;

namespace {

// The causal mask aligned to the bottom right with the padding mask's
// run-time lengths, on sm_90, is supported from this version on.
constexpr size_t kOldestCudnn = 90600;

// The graph's tensors, by the uid the variant pack names them with.
enum Uid : int64_t { kQueries = 1, kKeys, kValues, kOutput, kQueryRows, kKeyPositions };

// The places tried, in order: the loader's search path, then where CUDA
// toolkits install it; or only the file MKRT_CUDNN names.
std::vector<std::string> candidates() {
  if (const char *chosen = std::getenv("MKRT_CUDNN"); chosen && *chosen)
    return {chosen};
  const std::string name = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
  std::vector<std::string> paths;
  paths.push_back(name);
  if (const char *home = std::getenv("CUDA_HOME"))
    for (const char *folder : {"/lib64/", "/lib/"})
      paths.push_back(home + std::string(folder) + name);
  for (const char *folder : {"/usr/local/cuda/lib64/", "/usr/local/cuda/lib/",
                             "/usr/lib/x86_64-linux-gnu/"})
    paths.push_back(folder + name);
  return paths;
}

std::string versionText(size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

// [1][count][rows][dim] over memory laid out [rows][count][dim].
std::vector<int64_t> headsByRows(int64_t count, int64_t rows, int64_t dim) {
  return {rows * count * dim, dim, count * dim, 1};
}

// [1][count][rows][dim] over memory laid out as that: the KV caches, head
// by head (core/protocol/AttentionLayout.h's cacheEntry).
std::vector<int64_t> rowsByHeads(int64_t count, int64_t rows, int64_t dim) {
  return {count * rows * dim, rows * dim, dim, 1};
}

// The graph of one attention: bf16 in and out, f32 scores and sums; the
// lengths by the padding mask, the causal mask aligned to the bottom right
// (row r of `rows` sees the positions up to keyPositions - rows + r), no
// statistics kept. `sm` 90 for sm_90 (else the frontend asks the CUDA
// runtime).
void describeGraph(fe::graph::Graph &graph, const CudnnAttentionShape &shape, int64_t paddedRows,
                   int sm) {
  graph.set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  graph.set_sm_version(sm);
  auto tensor = [&](const char *name, Uid uid, int64_t count, int64_t rows, bool cache) {
    return graph.tensor(fe::graph::Tensor_attributes()
                            .set_name(name)
                            .set_uid(uid)
                            .set_dim({1, count, rows, shape.headDim})
                            .set_stride(cache ? rowsByHeads(count, rows, shape.headDim)
                                              : headsByRows(count, rows, shape.headDim)));
  };
  auto length = [&](const char *name, Uid uid) {
    return graph.tensor(fe::graph::Tensor_attributes()
                            .set_name(name)
                            .set_uid(uid)
                            .set_dim({1, 1, 1, 1})
                            .set_stride({1, 1, 1, 1})
                            .set_data_type(fe::DataType_t::INT32));
  };
  auto queries = tensor("queries", kQueries, shape.heads, paddedRows, false);
  auto keys = tensor("keys", kKeys, shape.kvHeads, shape.positions, true);
  auto values = tensor("values", kValues, shape.kvHeads, shape.positions, true);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("prompt attention")
                     .set_generate_stats(false)
                     .set_attn_scale(shape.scale)
                     .set_padding_mask(true)
                     .set_seq_len_q(length("query rows", kQueryRows))
                     .set_seq_len_kv(length("key positions", kKeyPositions))
                     .set_causal_mask_bottom_right(true);
  auto [output, statistics] = graph.sdpa(queries, keys, values, options);
  (void)statistics;
  output->set_output(true)
      .set_uid(kOutput)
      .set_dim({1, shape.heads, paddedRows, shape.headDim})
      .set_stride(headsByRows(shape.heads, paddedRows, shape.headDim));
}

std::string refusal(const CudnnAttentionShape &shape, size_t version, fe::error_t status) {
  return "cuDNN " + versionText(version) + " has no fused attention for " +
         std::to_string(shape.heads) + " heads over " + std::to_string(shape.kvHeads) +
         " KV heads of " + std::to_string(shape.headDim) + ": " + status.get_message();
}

// libcudnn, opened once a process (the frontend's handle is one global) and
// checked: its version, or why it cannot serve.
struct OpenedCudnn {
  size_t version = 0;
  std::string problem;
};

const OpenedCudnn &openCudnn() {
  static const OpenedCudnn opened = [] {
    OpenedCudnn result;
    const OpenedLibrary library = openFirstLibrary(candidates());
    if (!library.handle) {
      const char *chosen = std::getenv("MKRT_CUDNN");
      result.problem = chosen && *chosen
                           ? "MKRT_CUDNN names " + library.tried + ", which does not load"
                           : "libcudnn.so." + std::to_string(CUDNN_MAJOR) + " not found (tried " +
                                 library.tried + "; MKRT_CUDNN may name it)";
      return result;
    }
    cudnn_frontend::cudnn_dlhandle = library.handle;
    size_t (*getVersion)() = nullptr;
    if (!bindSymbol(library.handle, "cudnnGetVersion", getVersion)) {
      result.problem = "the cuDNN library found has no cudnnGetVersion";
      return result;
    }
    result.version = getVersion();
    if (result.version < kOldestCudnn || result.version / 10000 != CUDNN_MAJOR)
      result.problem = "cuDNN " + versionText(result.version) +
                       " found; the prompt's attention needs " + std::to_string(CUDNN_MAJOR) +
                       ".x from " + versionText(kOldestCudnn);
    return result;
  }();
  return opened;
}

class LoadedCudnnAttention final : public CudnnAttention {
public:
  LoadedCudnnAttention(const CudaDriver &cuda, cudnnHandle_t handle, size_t version, int sm,
                       DeviceMemory lengths)
      : cuda(cuda), handle(handle), version(version), sm(sm), lengths(std::move(lengths)) {}
  ~LoadedCudnnAttention() override {
    graphs.clear();
    fe::detail::destroy_handle(handle);
  }

  std::string describe() const override {
    return "cuDNN " + versionText(version) + "'s fused attention";
  }

  bool prepare(const CudnnAttentionShape &shape, int64_t paddedRows,
               std::string &whyNot) override {
    return graphFor(shape, paddedRows, whyNot) != nullptr;
  }

  bool setLengths(int64_t rows, int64_t firstPosition, std::string &error) override {
    const int32_t values[2] = {static_cast<int32_t>(rows),
                               static_cast<int32_t>(firstPosition + rows)};
    CUresult result = cuda.cuMemcpyHtoD(lengths.get(), values, sizeof values);
    if (result != CUDA_SUCCESS) {
      error = "copying cuDNN's attention lengths: " + cuda.describe(result);
      return false;
    }
    return true;
  }

  bool run(const CudnnAttentionShape &shape, int64_t paddedRows, CUdeviceptr queries,
           CUdeviceptr keys, CUdeviceptr values, CUdeviceptr output,
           std::string &error) override {
    fe::graph::Graph *graph = graphFor(shape, paddedRows, error);
    if (!graph)
      return false;
    auto pointer = [](CUdeviceptr address) { return reinterpret_cast<void *>(address); };
    std::unordered_map<int64_t, void *> pack = {
        {kQueries, pointer(queries)},
        {kKeys, pointer(keys)},
        {kValues, pointer(values)},
        {kOutput, pointer(output)},
        {kQueryRows, pointer(lengths.get())},
        {kKeyPositions, pointer(lengths.get() + sizeof(int32_t))}};
    try {
      fe::error_t status = graph->execute(handle, pack, pointer(workspace.get()));
      if (status.is_good())
        return true;
      error = "cuDNN's attention: " + status.get_message();
    } catch (const std::exception &thrown) {
      error = std::string("cuDNN's attention: ") + thrown.what();
    }
    return false;
  }

private:
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, uint32_t>;

  fe::graph::Graph *graphFor(const CudnnAttentionShape &shape, int64_t paddedRows,
                             std::string &whyNot) {
    uint32_t scaleBits = 0;
    std::memcpy(&scaleBits, &shape.scale, sizeof scaleBits);
    const Key key{shape.heads, shape.kvHeads, shape.headDim, shape.positions, paddedRows,
                  scaleBits};
    if (auto found = graphs.find(key); found != graphs.end())
      return found->second.get();
    auto graph = std::make_unique<fe::graph::Graph>();
    try {
      if (!build(*graph, shape, paddedRows, whyNot))
        return nullptr;
    } catch (const std::exception &thrown) {
      whyNot = std::string("cuDNN's attention graph: ") + thrown.what();
      return nullptr;
    }
    int64_t bytes = 0;
    if (fe::error_t status = graph->get_workspace_size(bytes); !status.is_good()) {
      whyNot = "cuDNN's attention workspace: " + status.get_message();
      return nullptr;
    }
    if (static_cast<size_t>(bytes) > workspace.bytes())
      if (whyNot = workspace.allocate(cuda, static_cast<size_t>(bytes), "cuDNN's workspace");
          !whyNot.empty())
        return nullptr;
    return graphs.emplace(key, std::move(graph)).first->second.get();
  }

  bool build(fe::graph::Graph &graph, const CudnnAttentionShape &shape, int64_t paddedRows,
             std::string &whyNot) {
    describeGraph(graph, shape, paddedRows, sm);
    fe::error_t status = graph.build(handle, {fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
    if (!status.is_good()) {
      whyNot = refusal(shape, version, status);
      return false;
    }
    return true;
  }

  const CudaDriver &cuda;
  cudnnHandle_t handle;
  size_t version;
  int sm;
  DeviceMemory lengths; // int32 query rows, key positions
  DeviceMemory workspace;
  std::map<Key, std::unique_ptr<fe::graph::Graph>> graphs;
};

} // namespace

std::unique_ptr<CudnnAttention> CudnnAttention::create(const CudaDriver &cuda,
                                                       std::string &whyNot) {
  const OpenedCudnn &opened = openCudnn();
  if (!opened.problem.empty()) {
    whyNot = opened.problem;
    return nullptr;
  }
  const size_t version = opened.version;
  CUdevice device = 0;
  int major = 0, minor = 0;
  if (cuda.cuCtxGetDevice(&device) != CUDA_SUCCESS ||
      cuda.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) !=
          CUDA_SUCCESS ||
      cuda.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) !=
          CUDA_SUCCESS) {
    whyNot = "no current CUDA context for cuDNN";
    return nullptr;
  }
  DeviceMemory lengths;
  if (whyNot = lengths.allocate(cuda, 2 * sizeof(int32_t), "cuDNN's attention lengths");
      !whyNot.empty())
    return nullptr;
  cudnnHandle_t handle = nullptr;
  try {
    if (cudnnStatus_t status = fe::detail::create_handle(&handle); status != CUDNN_STATUS_SUCCESS) {
      whyNot = "cuDNN " + versionText(version) + " could not start (status " +
               std::to_string(static_cast<int>(status)) + ")";
      return nullptr;
    }
  } catch (const std::exception &thrown) {
    whyNot = std::string("cuDNN could not start: ") + thrown.what();
    return nullptr;
  }
  return std::make_unique<LoadedCudnnAttention>(cuda, handle, version, major * 10 + minor,
                                                std::move(lengths));
}

std::string CudnnAttention::checkShape(const CudnnAttentionShape &shape, int64_t paddedRows,
                                       int sm) {
  const OpenedCudnn &opened = openCudnn();
  if (!opened.problem.empty())
    return opened.problem;
  try {
    fe::graph::Graph graph;
    describeGraph(graph, shape, paddedRows, sm);
    if (fe::error_t status = graph.validate(); !status.is_good())
      return refusal(shape, opened.version, status);
  } catch (const std::exception &thrown) {
    return std::string("cuDNN's attention graph: ") + thrown.what();
  }
  return "";
}

} // namespace mk
