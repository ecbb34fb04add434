// The C API of include/mkrt.h over the artifact loader and the engines.
// Nothing escapes it as an exception: every failure becomes a status and a
// message (mkrt_last_error, and errbuf where the call has one).
#include "runtime/mkrt/ChromeTrace.h"
#include "runtime/mkrt/Engine.h"
#include "core/taskgraph/StepRows.h"
#include "core/kernels/Sampling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>

struct mkrt_model {
  std::unique_ptr<mk::LoadedArtifact> loaded;
};

struct mkrt_session {
  const mkrt_model *model = nullptr;
  std::unique_ptr<mk::rt::Engine> engine;
  std::string device;
  int64_t maxContext = 0;
  int64_t startPosition = 0;  // where every call's first token goes
  int64_t contextLength = 0;  // positions of the context mkrt_continue keeps
  std::string tracePath;      // "": mkrt_generate records no trace
  std::vector<double> stepMs; // the last mkrt_generate's, behind mkrt_timing.step_ms
  MkSamplingSettings sampling = mk_sampling_greedy();
};

namespace {

using mk::rt::EngineError;

thread_local std::string lastError;

mkrt_status fail(mkrt_status status, const std::string &message, char *errbuf = nullptr,
                 size_t errbufSize = 0) {
  lastError = message;
  if (errbuf && errbufSize > 0)
    std::snprintf(errbuf, errbufSize, "%s", message.c_str());
  return status;
}

// Runs `body`, turning what it throws into a status.
template <class Body>
mkrt_status guarded(Body &&body, char *errbuf = nullptr, size_t errbufSize = 0) {
  try {
    lastError.clear();
    body();
    return MKRT_OK;
  } catch (const EngineError &error) {
    return fail(error.status, error.what(), errbuf, errbufSize);
  } catch (const std::bad_alloc &) {
    return fail(MKRT_ERROR_EXECUTION, "out of memory", errbuf, errbufSize);
  } catch (const std::exception &error) {
    return fail(MKRT_ERROR_EXECUTION, error.what(), errbuf, errbufSize);
  }
}

void require(bool condition, const std::string &message) {
  if (!condition)
    throw EngineError(MKRT_ERROR_INVALID_ARGUMENT, message);
}

const mk::Artifact &artifactOf(const mkrt_session *session) {
  return session->model->loaded->artifact;
}

void checkTokens(const mkrt_session *session, const int64_t *tokens, size_t n) {
  int64_t vocab = artifactOf(session).facts.vocab;
  for (size_t i = 0; i < n; ++i)
    require(tokens[i] >= 0 && tokens[i] < vocab,
            "token " + std::to_string(tokens[i]) + " (at index " + std::to_string(i) +
                ") is outside the vocabulary of " + std::to_string(vocab));
}

// `positions` from `first` (the start position, or the kept context's end,
// both below maxContext) must fit the session's context.
void checkContext(const mkrt_session *session, size_t positions, int64_t first,
                  const char *firstIs) {
  size_t room = static_cast<size_t>(session->maxContext - first);
  if (positions > room)
    throw EngineError(MKRT_ERROR_CONTEXT_FULL,
                      first == 0 ? std::to_string(positions) +
                                       " positions pass the session's max context of " +
                                       std::to_string(session->maxContext)
                                 : std::string(firstIs) + " " + std::to_string(first) + " + " +
                                       std::to_string(positions) +
                                       " positions pass the session's max context of " +
                                       std::to_string(session->maxContext));
}

void checkContext(const mkrt_session *session, size_t positions) {
  checkContext(session, positions, session->startPosition, "start position");
}

// The session's trace file from a launch of `graph` on `schedule` whose
// first step ran at `first`; a file that cannot be written fails the call.
void writeSessionTrace(const mkrt_session *session, const mk::TaskGraph &graph,
                       const mk::Schedule &schedule, const mk::rt::LaunchTrace &trace,
                       int64_t first) {
  std::string error = mk::rt::writeChromeTraceFile(session->tracePath, graph, schedule, trace,
                                                   first, session->device);
  if (!error.empty())
    throw EngineError(MKRT_ERROR_EXECUTION, error);
}

// mkrt_generate and mkrt_continue: the prompt fed from `first`, `n_new`
// tokens generated, the outputs and timing filled, the trace written.
// A callback of the C API, with what it was given.
struct TokenCallback {
  mkrt_token_callback function = nullptr;
  void *userData = nullptr;
};

void generateFrom(mkrt_session *session, const int64_t *prompt, size_t n_prompt, size_t n_new,
                  int64_t *out_tokens, size_t *n_out, mkrt_timing *timing, int64_t first,
                  bool keepCache, TokenCallback callback = {}) {
  bool tracing = !session->tracePath.empty();
  mk::rt::TokenPicking picking;
  picking.sampling = session->sampling;
  if (callback.function)
    picking.onToken = [callback](int64_t index, int64_t token) {
      return callback.function(callback.userData, token, static_cast<size_t>(index)) != 0;
    };
  auto start = std::chrono::steady_clock::now();
  mk::rt::Generation generation =
      session->engine->generate(std::vector<int64_t>(prompt, prompt + n_prompt),
                                static_cast<int64_t>(n_new), first, tracing, keepCache, picking);
  double totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::copy(generation.tokens.begin(), generation.tokens.end(), out_tokens);
  *n_out = generation.tokens.size();
  session->stepMs = std::move(generation.stepMs);
  if (timing) {
    *timing = {};
    timing->total_ms = totalMs;
    timing->kernel_ms = generation.kernelMs >= 0 ? generation.kernelMs : totalMs;
    timing->steps = generation.steps;
    timing->ms_per_token = generation.steps > 0 ? totalMs / generation.steps : 0;
    timing->tokens_per_second = totalMs > 0 ? generation.steps * 1000.0 / totalMs : 0;
    timing->stopped_at_eos = generation.stoppedAtEos ? 1 : 0;
    timing->stopped_by_callback = generation.stoppedByHost ? 1 : 0;
    timing->step_ms = session->stepMs.data();
    timing->num_step_ms = session->stepMs.size();
  }
  if (tracing) {
    const mk::rt::LaunchTrace &trace = generation.trace;
    writeSessionTrace(session, trace.graph ? trace.graph->graph : artifactOf(session).graph,
                      trace.graph ? trace.graph->schedule : artifactOf(session).schedule, trace,
                      first);
  }
}

std::unique_ptr<mk::rt::Engine> makeEngine(const mk::Artifact &artifact, const std::string &device,
                                           int64_t maxContext) {
  if (device == "cpu")
    return mk::rt::makeCpuEngine(artifact);
  std::string whyNot;
  auto gpu = mk::rt::makeGpuEngine(artifact, maxContext, whyNot);
  if (gpu)
    return gpu;
  if (device == "gpu")
    throw EngineError(MKRT_ERROR_NO_DEVICE, "device gpu is unavailable: " + whyNot);
  std::cerr << "mkrt: note: running on the CPU: " << whyNot << "\n";
  return mk::rt::makeCpuEngine(artifact);
}

// A refused request leaves the kept context as it was; a run that failed may
// have left its cache half written.
void endContextIfRunFailed(mkrt_session *session, mkrt_status status) {
  if (session && status != MKRT_OK && status != MKRT_ERROR_INVALID_ARGUMENT &&
      status != MKRT_ERROR_CONTEXT_FULL)
    session->contextLength = 0;
}

} // namespace

namespace {

mkrt_status generateCall(mkrt_session *session, const int64_t *prompt, size_t n_prompt,
                         size_t n_new, int64_t *out_tokens, size_t *n_out, mkrt_timing *timing,
                         TokenCallback callback, const char *name) {
  return guarded([&] {
    require(session && prompt && n_out && (out_tokens || n_new == 0),
            std::string(name) + ": a pointer argument is NULL");
    // A new context: on the GPU it overwrites the kept one's cache.
    session->contextLength = 0;
    require(n_prompt >= 1, std::string(name) + ": the prompt is empty");
    *n_out = 0;
    checkTokens(session, prompt, n_prompt);
    checkContext(session, n_prompt + std::max<size_t>(n_new, 1) - 1);
    generateFrom(session, prompt, n_prompt, n_new, out_tokens, n_out, timing,
                 session->startPosition, false, callback);
  });
}

mkrt_status continueCall(mkrt_session *session, const int64_t *tokens, size_t n, size_t n_new,
                         int64_t *out_tokens, size_t *n_out, mkrt_timing *timing,
                         TokenCallback callback, const char *name) {
  int64_t kept = session ? session->contextLength : 0;
  mkrt_status status = guarded([&] {
    require(session && tokens && n_out && (out_tokens || n_new == 0),
            std::string(name) + ": a pointer argument is NULL");
    require(n >= 1, std::string(name) + ": no tokens to feed");
    *n_out = 0;
    checkTokens(session, tokens, n);
    checkContext(session, n + std::max<size_t>(n_new, 1) - 1, kept, "context length");
    generateFrom(session, tokens, n, n_new, out_tokens, n_out, timing, kept, true, callback);
    // The last generated token is returned, not fed.
    session->contextLength =
        kept + static_cast<int64_t>(n) + (*n_out > 0 ? static_cast<int64_t>(*n_out) - 1 : 0);
  });
  endContextIfRunFailed(session, status);
  return status;
}

// The C API's settings as the kernel's, or why not.
MkSamplingSettings toSettings(const mkrt_sampling &given) {
  require(given.top_k >= 0, "top_k " + std::to_string(given.top_k) + " is negative (0: off)");
  require(given.top_k <= MK_SAMPLING_MAX_CANDIDATES,
          "top_k " + std::to_string(given.top_k) + " is more than the " +
              std::to_string(MK_SAMPLING_MAX_CANDIDATES) + " candidates the sampler considers");
  auto finite = [](double value, const char *name) {
    require(std::isfinite(value), std::string(name) + " is not a finite number");
  };
  finite(given.temperature, "temperature");
  finite(given.top_p, "top_p");
  finite(given.min_p, "min_p");
  finite(given.repetition_penalty, "repetition_penalty");
  MkSamplingSettings settings = mk_sampling_greedy();
  settings.temperature = static_cast<float>(given.temperature);
  settings.topK = static_cast<uint32_t>(given.top_k);
  settings.topP = static_cast<float>(given.top_p);
  settings.minP = static_cast<float>(given.min_p);
  settings.repetitionPenalty = static_cast<float>(given.repetition_penalty);
  settings.seed = given.seed;
  std::string problem = mk::kernels::checkSamplingSettings(settings);
  require(problem.empty(), problem);
  // A temperature so small that it rounds to 0 as a float is greedy.
  return settings;
}

} // namespace

extern "C" {

mkrt_status mkrt_open(const char *path, mkrt_model **model, char *errbuf, size_t errbuf_size) {
  if (!model)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_open: model is NULL", errbuf, errbuf_size);
  *model = nullptr;
  if (!path)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_open: path is NULL", errbuf, errbuf_size);
  std::unique_ptr<mkrt_model> opened;
  mkrt_status status = guarded(
      [&] {
        std::string error;
        auto loaded = mk::loadArtifact(path, error);
        if (!loaded)
          throw EngineError(MKRT_ERROR_INVALID_MODEL, error);
        opened = std::make_unique<mkrt_model>();
        opened->loaded = std::move(loaded);
      },
      errbuf, errbuf_size);
  if (status == MKRT_OK)
    *model = opened.release();
  return status;
}

void mkrt_close(mkrt_model *model) { delete model; }

mkrt_status mkrt_model_info(const mkrt_model *model, mkrt_info *info) {
  if (!model || !info)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_model_info: model or info is NULL");
  const mk::Artifact &artifact = model->loaded->artifact;
  const mk::ModelFacts &facts = artifact.facts;
  *info = {};
  info->num_layers = facts.numLayers;
  info->hidden = facts.hidden;
  info->num_heads = facts.numHeads;
  info->num_kv_heads = facts.numKvHeads;
  info->head_dim = facts.headDim;
  info->vocab = facts.vocab;
  info->max_context = facts.maxContext;
  info->num_sms = facts.numSms;
  info->has_kernel = mk::hasKernel(artifact) ? 1 : 0;
  info->target_arch = facts.targetArch.c_str();
  info->compiler_version = facts.compilerVersion.c_str();
  info->kernel_fingerprint = facts.kernelFingerprint.c_str();
  info->eos_tokens = facts.eosTokens.data();
  info->num_eos_tokens = facts.eosTokens.size();
  lastError.clear();
  return MKRT_OK;
}

mkrt_status mkrt_model_batch_sizes(const mkrt_model *model, int64_t *sizes, size_t capacity,
                                   size_t *count) {
  if (!model || !count || (!sizes && capacity > 0))
    return fail(MKRT_ERROR_INVALID_ARGUMENT,
                "mkrt_model_batch_sizes: model or count is NULL, or sizes is NULL with a capacity");
  std::vector<int64_t> batches;
  for (const mk::ScheduledGraph &step : model->loaded->artifact.rowSteps)
    if (mk::isBatchStep(step.graph))
      batches.push_back(step.graph.rows);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  *count = batches.size();
  for (size_t i = 0; i < batches.size() && i < capacity; ++i)
    sizes[i] = batches[i];
  lastError.clear();
  return MKRT_OK;
}

mkrt_status mkrt_model_generation_info(const mkrt_model *model, mkrt_generation_info *info) {
  if (!model || !info)
    return fail(MKRT_ERROR_INVALID_ARGUMENT,
                "mkrt_model_generation_info: model or info is NULL");
  const mk::Artifact &artifact = model->loaded->artifact;
  const mk::GenerationFacts &facts = artifact.facts.generation;
  *info = {};
  info->tokenizer_json = artifact.tokenizerJson.c_str();
  info->tokenizer_json_size = artifact.tokenizerJson.size();
  info->has_bos = facts.bosToken ? 1 : 0;
  info->bos_token = facts.bosToken.value_or(-1);
  info->chat_template = facts.chatTemplate.c_str();
  info->tokenizer_source = facts.tokenizerSource.c_str();
  info->has_temperature = facts.temperature ? 1 : 0;
  info->temperature = facts.temperature.value_or(0);
  info->has_top_k = facts.topK ? 1 : 0;
  info->top_k = facts.topK.value_or(0);
  info->has_top_p = facts.topP ? 1 : 0;
  info->top_p = facts.topP.value_or(0);
  lastError.clear();
  return MKRT_OK;
}

mkrt_status mkrt_session_create(mkrt_model *model, const char *device, int64_t max_context,
                                mkrt_session **session, char *errbuf, size_t errbuf_size) {
  if (!session)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_session_create: session is NULL", errbuf,
                errbuf_size);
  *session = nullptr;
  std::unique_ptr<mkrt_session> created;
  mkrt_status status = guarded(
      [&] {
        require(model && device, "mkrt_session_create: model or device is NULL");
        std::string name = device;
        require(name == "cpu" || name == "gpu" || name == "auto",
                "unknown device '" + name + "' (available: cpu, gpu, auto)");
        int64_t compiled = model->loaded->artifact.graph.maxContext;
        require(max_context >= 0 && max_context <= compiled,
                "max context " + std::to_string(max_context) + " is outside [0, " +
                    std::to_string(compiled) + "] (0 takes " + std::to_string(compiled) +
                    ", the context the model was compiled for)");
        created = std::make_unique<mkrt_session>();
        created->model = model;
        created->maxContext = max_context == 0 ? compiled : max_context;
        created->engine = makeEngine(model->loaded->artifact, name, created->maxContext);
        created->device = created->engine->describe();
      },
      errbuf, errbuf_size);
  if (status == MKRT_OK)
    *session = created.release();
  return status;
}

void mkrt_session_destroy(mkrt_session *session) { delete session; }

const char *mkrt_session_device(const mkrt_session *session) {
  return session ? session->device.c_str() : "";
}


void mkrt_sampling_init(mkrt_sampling *sampling) {
  if (sampling)
    *sampling = mkrt_sampling{0.0, 0, 1.0, 0.0, 1.0, 0};
}

mkrt_status mkrt_session_set_sampling(mkrt_session *session, const mkrt_sampling *sampling) {
  return guarded([&] {
    require(session, "mkrt_session_set_sampling: session is NULL");
    session->sampling = sampling ? toSettings(*sampling) : mk_sampling_greedy();
  });
}

mkrt_status mkrt_generate(mkrt_session *session, const int64_t *prompt, size_t n_prompt,
                          size_t n_new, int64_t *out_tokens, size_t *n_out, mkrt_timing *timing) {
  return generateCall(session, prompt, n_prompt, n_new, out_tokens, n_out, timing, {},
                      "mkrt_generate");
}

mkrt_status mkrt_generate_stream(mkrt_session *session, const int64_t *prompt, size_t n_prompt,
                                 size_t n_new, mkrt_token_callback callback, void *user_data,
                                 int64_t *out_tokens, size_t *n_out, mkrt_timing *timing) {
  if (!callback)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_generate_stream: callback is NULL");
  return generateCall(session, prompt, n_prompt, n_new, out_tokens, n_out, timing,
                      {callback, user_data}, "mkrt_generate_stream");
}

mkrt_status mkrt_continue(mkrt_session *session, const int64_t *tokens, size_t n, size_t n_new,
                          int64_t *out_tokens, size_t *n_out, mkrt_timing *timing) {
  return continueCall(session, tokens, n, n_new, out_tokens, n_out, timing, {}, "mkrt_continue");
}

mkrt_status mkrt_continue_stream(mkrt_session *session, const int64_t *tokens, size_t n,
                                 size_t n_new, mkrt_token_callback callback, void *user_data,
                                 int64_t *out_tokens, size_t *n_out, mkrt_timing *timing) {
  if (!callback)
    return fail(MKRT_ERROR_INVALID_ARGUMENT, "mkrt_continue_stream: callback is NULL");
  return continueCall(session, tokens, n, n_new, out_tokens, n_out, timing, {callback, user_data},
                      "mkrt_continue_stream");
}

mkrt_status mkrt_continue_logits(mkrt_session *session, const int64_t *tokens, size_t n,
                                 float *out_logits) {
  int64_t kept = session ? session->contextLength : 0;
  mkrt_status status = guarded([&] {
    require(session && tokens && out_logits, "mkrt_continue_logits: a pointer argument is NULL");
    require(n >= 1, "mkrt_continue_logits: no tokens to feed");
    checkTokens(session, tokens, n);
    checkContext(session, n, kept, "context length");
    std::vector<float> logits =
        session->engine->evalLogits(std::vector<int64_t>(tokens, tokens + n), kept, true);
    std::copy(logits.begin(), logits.end(), out_logits);
    session->contextLength = kept + static_cast<int64_t>(n);
  });
  endContextIfRunFailed(session, status);
  return status;
}

int64_t mkrt_session_context_length(const mkrt_session *session) {
  return session ? session->contextLength : 0;
}

mkrt_status mkrt_session_rewind(mkrt_session *session, int64_t length) {
  return guarded([&] {
    require(session, "mkrt_session_rewind: session is NULL");
    require(length >= 0 && length <= session->contextLength,
            "cannot rewind to length " + std::to_string(length) + ": the kept context holds " +
                std::to_string(session->contextLength) + " positions");
    session->contextLength = length;
  });
}

mkrt_status mkrt_session_set_trace(mkrt_session *session, const char *path) {
  return guarded([&] {
    require(session, "mkrt_session_set_trace: session is NULL");
    require(!path || *path, "mkrt_session_set_trace: the path is empty (NULL stops tracing)");
    session->tracePath = path ? path : "";
  });
}

mkrt_status mkrt_session_set_start_position(mkrt_session *session, int64_t position) {
  return guarded([&] {
    require(session, "mkrt_session_set_start_position: session is NULL");
    require(position >= 0, "start position " + std::to_string(position) + " is negative");
    if (position >= session->maxContext)
      throw EngineError(MKRT_ERROR_CONTEXT_FULL,
                        "start position " + std::to_string(position) +
                            " leaves no room in the session's max context of " +
                            std::to_string(session->maxContext));
    session->startPosition = position;
  });
}

mkrt_status mkrt_session_set_prompt_by_step(mkrt_session *session, int by_step) {
  return guarded([&] {
    require(session, "mkrt_session_set_prompt_by_step: session is NULL");
    session->engine->setPromptByStep(by_step != 0);
  });
}

mkrt_status mkrt_generate_batch(mkrt_session *session, const int64_t *const *prompts,
                                const size_t *n_prompts, size_t n_sequences, size_t n_new,
                                int64_t *out_tokens, size_t *n_out, mkrt_timing *timing) {
  return guarded([&] {
    require(session && prompts && n_prompts && n_out && out_tokens,
            "mkrt_generate_batch: a pointer argument is NULL");
    require(n_sequences >= 1, "mkrt_generate_batch: no sequences");
    require(n_new >= 1, "mkrt_generate_batch: n_new is 0: a batch generates at least 1 token");
    std::fill(n_out, n_out + n_sequences, 0);
    std::vector<std::vector<int64_t>> batch;
    for (size_t i = 0; i < n_sequences; ++i) {
      require(prompts[i] && n_prompts[i] >= 1,
              "mkrt_generate_batch: prompt " + std::to_string(i) + " is NULL or empty");
      checkTokens(session, prompts[i], n_prompts[i]);
      checkContext(session, n_prompts[i] + n_new - 1, session->startPosition, "start position");
      batch.emplace_back(prompts[i], prompts[i] + n_prompts[i]);
    }
    mk::rt::TokenPicking picking;
    picking.sampling = session->sampling;
    bool tracing = !session->tracePath.empty();
    auto start = std::chrono::steady_clock::now();
    mk::rt::BatchGeneration batched =
        session->engine->generateBatch(batch, static_cast<int64_t>(n_new), session->startPosition,
                                       tracing, picking);
    double totalMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const std::vector<mk::rt::Generation> &generations = batched.sequences;
    size_t produced = 0;
    bool allAtEos = true;
    for (size_t i = 0; i < n_sequences; ++i) {
      const std::vector<int64_t> &tokens = generations[i].tokens;
      std::copy(tokens.begin(), tokens.end(), out_tokens + i * n_new);
      n_out[i] = tokens.size();
      produced += tokens.size();
      allAtEos = allAtEos && generations[i].stoppedAtEos;
    }
    session->stepMs = generations.front().stepMs;
    if (timing) {
      int64_t steps = generations.front().steps;
      *timing = {};
      timing->total_ms = totalMs;
      timing->kernel_ms =
          generations.front().kernelMs >= 0 ? generations.front().kernelMs : totalMs;
      timing->steps = steps;
      timing->ms_per_token = steps > 0 ? totalMs / steps : 0;
      // By the launch alone: a GPU session's first batch of a size also
      // loads that batch's kernel and weights.
      timing->tokens_per_second =
          timing->kernel_ms > 0 ? produced * 1000.0 / timing->kernel_ms : 0;
      timing->stopped_at_eos = allAtEos ? 1 : 0;
      timing->step_ms = session->stepMs.data();
      timing->num_step_ms = session->stepMs.size();
    }
    if (tracing) {
      // The batch step's own graph: its tasks carry every row.
      const mk::ScheduledGraph &step = artifactOf(session).rowSteps.at(batched.rowStep);
      writeSessionTrace(session, step.graph, step.schedule, batched.trace,
                        session->startPosition);
    }
  });
}

mkrt_status mkrt_eval_logits(mkrt_session *session, const int64_t *tokens, size_t n,
                             float *out_logits) {
  return guarded([&] {
    require(session && tokens && out_logits, "mkrt_eval_logits: a pointer argument is NULL");
    session->contextLength = 0; // a new context, as mkrt_generate
    require(n >= 1, "mkrt_eval_logits: no tokens");
    checkTokens(session, tokens, n);
    checkContext(session, n);
    std::vector<float> logits = session->engine->evalLogits(
        std::vector<int64_t>(tokens, tokens + n), session->startPosition, false);
    std::copy(logits.begin(), logits.end(), out_logits);
  });
}

const char *mkrt_last_error(void) { return lastError.c_str(); }

} // extern "C"
