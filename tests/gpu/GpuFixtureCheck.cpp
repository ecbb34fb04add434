// The megakernel on the GPU against the CPU executor, for one fixture:
//
//   mk-gpu-check MODEL.onnx [--max-context=N] [--kv-cache=bf16]
//   mk-gpu-check SHAPE.mlir [--max-context=N] [--kv-cache=bf16]
//   mk-gpu-check --toy [--kv-cache=bf16]
//
// A .mlir module of mk IR (scripts/fused_module.py CONFIG.json) declares
// weights without values: it runs with random ones, which is how the kernel
// meets a real model's sizes (and its bandwidth is measured) without one.
// The model (or the hand-made toy graph of tests/unit/ToyTaskGraph.h, whose
// second layer has qkv biases and partial, interleaved rotary) is compiled
// as `mkc compile --emit=mk` would (schedule, NVRTC kernel, bf16 weights)
// into an in-memory artifact; the CPU executor runs
// the same graph on the same bf16 weights, so the two differ only by the
// order and precision of their sums. Checks, each printed as one line:
//   - teacher-forced logits within kTolerance of the CPU's (relative to the
//     largest logit), and the argmax wherever the CPU's top-2 gap is clear;
//   - two launches give the same bits;
//   - greedy generation (the argmax fed back inside the kernel) gives the
//     tokens that teacher forcing them reproduces, and the CPU agrees where
//     its top-2 gap is clear;
//   - every step of a launch has a positive time, and a traced launch
//     records each task's wait, start and end in order, a task starting no
//     earlier than the tasks it waits on ended;
//   - sampling (temperature, top-k, top-p, min-p, repetition penalty) with
//     fixed seeds gives the same tokens in two launches, and the CPU
//     executor's tokens with the same settings (the pick is bit-identical on
//     both; the logits differ in their last bits, so a draw within rounding
//     of a boundary could flip: the line says where they part);
//   - streaming: the callback sees every token, in order, while the kernel
//     runs (their arrivals spread over the launch), and its stop cancels
//     the launch after that token, the kernel ending early;
//   - an EOS token stops generation after it;
//   - a wait that can never be satisfied ends the launch with
//     MK_ERROR_WAIT_TIMEOUT instead of hanging;
//   - NaN weights end it with MK_ERROR_NON_FINITE_LOGIT;
//   - a kernel generated for another graph (one variant different) is
//     refused when the artifact is loaded;
//   - with all but 64 MiB of the device's memory taken, loading the model
//     is refused (unsupported, nothing failed) with the numbers.
// Exit 0 when all pass, 1 when one fails (a GPU that fails to load or run
// the model included), 77 (ctest's skip) with the reason only when the GPU
// is unavailable: none, no driver, or one that cannot run the file.
#include "GpuTestModels.h"
#include "ToyTaskGraph.h"

#include "codegen/Megakernel.h"
#include "runtime/cpu/CpuExecutor.h"
#include "runtime/format/ArtifactBuilder.h"
#include "runtime/format/ControlBlock.h"
#include "runtime/format/ScheduleBlob.h"
#include "runtime/format/WeightPacking.h"
#include "runtime/gpu/GpuDevice.h"
#ifdef MKC_HAVE_CUDA_H
#include "runtime/gpu/CudaDriver.h"
#endif

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace mk {
namespace {

constexpr double kTolerance = 2e-3; // of the largest |logit|
constexpr float kClearGap = 1e-2f;  // top-2 gaps below this may flip either way

int failures = 0;

void report(bool passed, const std::string &what) {
  std::printf("  %s  %s\n", passed ? "ok  " : "FAIL", what.c_str());
  failures += passed ? 0 : 1;
}

// Takes the device's free memory but for 64 MiB (through the driver, in the
// primary context the device uses), then loads `artifact`: the load must be
// refused as unsupported, naming the numbers, before anything is
// allocated. Without cuda.h at build time there is no driver to take memory
// through, and the check says so.
void checkTooBigForTheFreeMemory(GpuDevice &device, const Artifact &artifact) {
#ifdef MKC_HAVE_CUDA_H
  std::string whyNot;
  const CudaDriver *cuda = CudaDriver::load(whyNot);
  CUdevice ordinal = 0;
  CUcontext context = nullptr;
  if (!cuda || cuda->cuDeviceGet(&ordinal, 0) != CUDA_SUCCESS ||
      cuda->cuDevicePrimaryCtxRetain(&context, ordinal) != CUDA_SUCCESS ||
      cuda->cuCtxSetCurrent(context) != CUDA_SUCCESS) {
    report(false, "the driver for taking device memory: " + whyNot);
    return;
  }
  // In pieces (one allocation of nearly all the memory fails where many
  // smaller ones succeed), leaving 64 MiB: room for the module, less than
  // the launch reserve every model needs on top of its arenas.
  size_t keep = size_t(64) << 20, freeBytes = 0, totalBytes = 0;
  std::vector<CUdeviceptr> taken;
  for (size_t piece = size_t(1) << 30; piece >= (size_t(1) << 20);) {
    cuda->cuMemGetInfo(&freeBytes, &totalBytes);
    CUdeviceptr block = 0;
    if (freeBytes < keep + piece || cuda->cuMemAlloc(&block, piece) != CUDA_SUCCESS)
      piece /= 2;
    else
      taken.push_back(block);
  }
  cuda->cuMemGetInfo(&freeBytes, &totalBytes);
  if (freeBytes >= 2 * keep) {
    report(false, "taking the device memory: " + std::to_string(freeBytes) +
                      " bytes are still free");
  } else {
    std::string error;
    GpuStatus loaded = device.load(artifact, 0, error);
    report(loaded == GpuStatus::Unsupported && error.find("the GPU has") != std::string::npos,
           "a model bigger than the free device memory is refused before launch: " + error);
  }
  for (CUdeviceptr block : taken)
    cuda->cuMemFree(block);
  cuda->cuDevicePrimaryCtxRelease(ordinal);
#else
  (void)device;
  (void)artifact;
  std::printf("  skip  the free-memory refusal: built without cuda.h, no driver to take memory\n");
#endif
}

bool gpuRun(GpuDevice &device, const GpuRunRequest &request, GpuRunResult &result) {
  std::string error;
  if (device.run(request, result, error) == GpuStatus::Ok)
    return true;
  std::printf("  run failed: %s\n", error.c_str());
  return false;
}

void checkLogits(const std::vector<float> &gpu, const std::vector<float> &cpu, int64_t vocab,
                 double milliseconds, int64_t steps, uint64_t weightBytes) {
  double largest = 0, worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    largest = std::max(largest, std::fabs(double(cpu[i])));
    worst = std::max(worst, std::fabs(double(gpu[i]) - double(cpu[i])));
  }
  int clear = 0, agree = 0;
  for (int64_t step = 0; step < steps; ++step) {
    Row reference = rowFacts(cpu.data() + step * vocab, vocab);
    if (reference.gap < kClearGap)
      continue;
    ++clear;
    agree += rowFacts(gpu.data() + step * vocab, vocab).argmax == reference.argmax;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "teacher-forced logits: max error %.2e of max |logit| %.3f (tolerance %.0e), "
                "argmax %d/%d, %.3f ms/step (%.0f GB/s of weights)",
                worst / largest, largest, kTolerance, agree, clear, milliseconds / steps,
                weightBytes / (milliseconds / steps) * 1e-6);
  report(gpu.size() == cpu.size() && worst <= kTolerance * largest && agree == clear, line);
}

// A launch's step times: one per step, each positive, together within the
// launch's time by CUDA events.
void checkStepTimes(const GpuRunResult &result, const std::string &what) {
  bool positive = true;
  double sum = 0;
  for (double ms : result.stepMilliseconds) {
    positive = positive && ms > 0;
    sum += ms;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %zu step times for %lld steps, %.3f ms in all, the launch %.3f ms",
                what.c_str(), result.stepMilliseconds.size(), static_cast<long long>(result.steps),
                sum, result.kernelMilliseconds);
  report(static_cast<int64_t>(result.stepMilliseconds.size()) == result.steps && positive &&
             sum <= result.kernelMilliseconds,
         line);
}

// A traced launch: every (step, task) has its three times, nonzero and in
// order, and starts no earlier than the tasks triggering the events it
// waits on ended (their end is marked before their release, its start
// after its acquire).
void checkTrace(const GpuRunResult &result, const TaskGraph &graph) {
  const size_t tasks = graph.tasks.size(), steps = static_cast<size_t>(result.steps);
  const std::vector<uint64_t> &trace = result.trace;
  auto time = [&](size_t step, uint32_t task, int which) {
    return trace[(step * tasks + task) * MK_TRACE_TIMES + which];
  };
  std::string problem;
  if (trace.size() != steps * tasks * MK_TRACE_TIMES)
    problem = "the trace has " + std::to_string(trace.size()) + " times, not " +
              std::to_string(steps * tasks * MK_TRACE_TIMES);
  uint64_t waited = 0;
  for (size_t step = 0; step < steps && problem.empty(); ++step)
    for (uint32_t id = 0; id < tasks && problem.empty(); ++id) {
      uint64_t wait = time(step, id, MK_TRACE_WAIT), start = time(step, id, MK_TRACE_START),
               end = time(step, id, MK_TRACE_END);
      if (wait == 0 || wait > start || start > end)
        problem = "step " + std::to_string(step) + ", task " + std::to_string(id) + ": wait " +
                  std::to_string(wait) + ", start " + std::to_string(start) + ", end " +
                  std::to_string(end);
      waited += start - wait;
      for (const Wait &edge : graph.tasks[id].waits) {
        int64_t producerStep = static_cast<int64_t>(step) + edge.stepOffset;
        for (uint32_t producer = 0; producerStep >= 0 && producer < tasks; ++producer)
          if (graph.tasks[producer].trigger == edge.event &&
              time(producerStep, producer, MK_TRACE_END) > start)
            problem = "step " + std::to_string(step) + ", task " + std::to_string(id) +
                      " started before task " + std::to_string(producer) + " ended";
      }
    }
  char line[256];
  std::snprintf(line, sizeof line,
                "a traced launch records %zu tasks x %zu steps in order (%.3f ms waited in all)",
                tasks, steps, waited * 1e-6);
  report(problem.empty() && result.startNs != 0, problem.empty() ? line : problem);
}

// The lm_head's weights (the last gemv's), which feed the logits.
const WeightEntry *logitsWeight(const Artifact &artifact) {
  for (auto op = artifact.graph.operations.rbegin(); op != artifact.graph.operations.rend(); ++op)
    if (op->kind == OpKind::Gemv)
      for (const WeightEntry &entry : artifact.weights)
        if (entry.name == op->weights[0].name)
          return &entry;
  return nullptr;
}

std::string tokenText(const std::vector<int64_t> &tokens) {
  std::string text;
  for (int64_t token : tokens)
    text += (text.empty() ? "" : " ") + std::to_string(token);
  return text;
}

// Sampled generation with fixed seeds: the same on two launches and on the
// CPU executor.
void checkSampling(GpuDevice &device, const Artifact &artifact, const std::vector<int64_t> &prompt,
                   int64_t newTokens) {
  WeightTable weights = unpackWeights(artifact.weights, artifact.weightData);
  struct Named {
    const char *name;
    MkSamplingSettings settings;
  };
  std::vector<Named> cases;
  for (uint64_t seed : {1ull, 7ull, 123456789ull}) {
    cases.push_back({"temperature 1", mk_sampling_settings(1.0f, 0, 1.0f, 0.0f, 1.0f, seed)});
    cases.push_back({"top-k 40 at 0.8", mk_sampling_settings(0.8f, 40, 1.0f, 0.0f, 1.0f, seed)});
    cases.push_back({"top-p 0.9", mk_sampling_settings(1.0f, 0, 0.9f, 0.0f, 1.0f, seed)});
    cases.push_back({"min-p 0.05", mk_sampling_settings(1.0f, 0, 1.0f, 0.05f, 1.0f, seed)});
    cases.push_back({"all, penalty 1.3", mk_sampling_settings(0.9f, 50, 0.95f, 0.02f, 1.3f, seed)});
  }
  int same = 0, launchesAgree = 0;
  std::string firstDifference;
  for (const Named &c : cases) {
    GpuRunRequest request{.tokens = prompt, .newTokens = newTokens};
    request.sampling = c.settings;
    GpuRunResult a, b;
    if (!gpuRun(device, request, a) || !gpuRun(device, request, b))
      return;
    launchesAgree += a.generated == b.generated;
    CpuExecutor executor(artifact.graph, artifact.schedule, weights, {.threaded = false});
    GenerateOptions options;
    options.sampling = c.settings;
    std::vector<int64_t> cpu = executor.generate(prompt, newTokens, options);
    if (cpu == a.generated)
      ++same;
    else if (firstDifference.empty())
      firstDifference = std::string(c.name) + ", seed " + std::to_string(c.settings.seed) +
                        ": GPU " + tokenText(a.generated) + " / CPU " + tokenText(cpu);
  }
  int total = static_cast<int>(cases.size());
  report(launchesAgree == total, "sampled generation: the same tokens in two launches (" +
                                     std::to_string(launchesAgree) + "/" + std::to_string(total) +
                                     " settings and seeds)");
  report(same == total, "sampled generation: the CPU executor picks the same tokens (" +
                            std::to_string(same) + "/" + std::to_string(total) + ")" +
                            (firstDifference.empty() ? "" : "; first difference: " + firstDifference));
}

// Streaming out of the running kernel, and the host's cancel. The host
// polls the kernel's stream from a thread that the other tests running at
// the same time can keep off a core for milliseconds, so the launch these
// checks time runs long enough for that not to matter: as many tokens as
// take kStreamedMs at the rate of `greedy` (at least its newTokens, at most
// what the context holds). A launch still shorter than kTimeableMs is too
// short to tell whether tokens arrived while it ran, and says so.
constexpr double kStreamedMs = 50, kTimeableMs = 20, kHostReactionMs = 5;

void checkStreaming(GpuDevice &device, const std::vector<int64_t> &prompt, int64_t newTokens,
                    int64_t maxContext, const GpuRunResult &greedy) {
  using Clock = std::chrono::steady_clock;
  double msPerStep = greedy.kernelMilliseconds / static_cast<double>(prompt.size() + newTokens);
  int64_t room = maxContext - static_cast<int64_t>(prompt.size());
  int64_t count = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(kStreamedMs / msPerStep)),
                                      newTokens, std::max(room, newTokens));
  GpuRunResult reference = greedy;
  if (count > newTokens && !gpuRun(device, {.tokens = prompt, .newTokens = count}, reference))
    return;
  std::vector<int64_t> seen;
  std::vector<double> arrivals; // ms since the run was asked for
  auto start = Clock::now();
  GpuRunRequest request{.tokens = prompt, .newTokens = count};
  request.onToken = [&](int64_t index, int64_t token) {
    arrivals.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    seen.push_back(index == static_cast<int64_t>(seen.size()) ? token : -1);
    return false;
  };
  GpuRunResult streamed;
  if (!gpuRun(device, request, streamed))
    return;
  double spread = arrivals.size() > 1 ? arrivals.back() - arrivals.front() : 0;
  report(seen == reference.generated && streamed.generated == reference.generated,
         "streaming: the callback saw every token in order (" + std::to_string(seen.size()) +
             " tokens)");
  double generating = streamed.kernelMilliseconds * static_cast<double>(count - 1) /
                      static_cast<double>(prompt.size() + count);
  std::string arrived = "first at " + std::to_string(arrivals.empty() ? 0 : arrivals.front()) +
                        " ms, last at " + std::to_string(arrivals.empty() ? 0 : arrivals.back()) +
                        " ms, launch " + std::to_string(streamed.kernelMilliseconds) + " ms";
  if (generating >= kTimeableMs)
    report(spread > 0.5 * generating, "streaming: tokens arrived while the kernel ran (" +
                                          arrived + ")");
  else
    std::printf("  note  streaming: %lld new tokens take too short a launch to tell whether "
                "they arrived while it ran (%s)\n",
                static_cast<long long>(count), arrived.c_str());

  constexpr int64_t kStopAfter = 5;
  seen.clear();
  request.onToken = [&](int64_t index, int64_t token) {
    seen.push_back(token);
    return index + 1 == kStopAfter;
  };
  GpuRunResult cancelled;
  if (!gpuRun(device, request, cancelled))
    return;
  std::vector<int64_t> expected(reference.generated.begin(),
                                reference.generated.begin() + std::min<int64_t>(kStopAfter, count));
  report(cancelled.generated == expected && seen == expected && cancelled.stopReason == "host",
         "cancel: the callback's stop ends generation after " + std::to_string(kStopAfter) +
             " tokens (got " + std::to_string(cancelled.generated.size()) + ", stop reason " +
             cancelled.stopReason + ")");
  // The launch stops soon after the cancel (the host polls): its share of
  // the whole launch's steps with four steps to spare, plus the host's
  // time to see the token and answer. A launch too short for that to tell
  // anything (the toy's short context) says so instead.
  double steps = static_cast<double>(prompt.size() + count);
  double share = (static_cast<double>(prompt.size() + kStopAfter) + 4.0) / steps;
  double bound = share * streamed.kernelMilliseconds + kHostReactionMs;
  std::string times = std::to_string(cancelled.kernelMilliseconds) + " ms against " +
                      std::to_string(streamed.kernelMilliseconds) + " ms for all " +
                      std::to_string(count);
  if (bound < 0.9 * streamed.kernelMilliseconds)
    report(cancelled.kernelMilliseconds < bound, "cancel: the kernel ended early (" + times + ")");
  else
    std::printf("  note  cancel: %lld new tokens take too short a launch to time an early end "
                "(%s)\n",
                static_cast<long long>(count), times.c_str());
}

int checkFixture(const std::string &path, int64_t maxContext, const TargetDescription &target) {
  std::unique_ptr<GpuDevice> device = openDeviceOrSkip();
  if (!device)
    return kSkipExit;
  std::printf("%s, max context %lld, %s KV cache, on %s\n", path.c_str(),
              static_cast<long long>(maxContext),
              target.kvCache == BufferElement::BF16 ? "bf16" : "f32", device->describe().c_str());
  std::optional<Model> model = loadModel(path, maxContext, target);
  if (!model)
    return 1;
  maxContext = model->graph.maxContext;
  std::unique_ptr<BuiltArtifact> built = compile(*model, {});
  if (!built)
    return 1;
  Artifact &artifact = built->artifact;
  int64_t vocab = artifact.facts.vocab;
  // Only a device that cannot run the file is a skip; one that fails to
  // load it is a failure.
  if (int loaded = loadOnDevice(*device, artifact); loaded != 0)
    return loaded;
  std::string error;

  int64_t steps = std::min<int64_t>(40, maxContext);
  std::vector<int64_t> tokens = someTokens(steps, vocab);
  GpuRunRequest forced{tokens, 0, true, true, 0};
  GpuRunResult first, second;
  if (!gpuRun(*device, forced, first) || !gpuRun(*device, forced, second))
    return 1;
  std::vector<float> reference = cpuLogits(artifact, tokens);
  checkLogits(first.logits, reference, vocab, first.kernelMilliseconds, steps,
              artifact.weightData.size_bytes());
  report(first.logits == second.logits && first.generated == second.generated,
         "two launches give the same bits");

  std::vector<int64_t> prompt(tokens.begin(), tokens.begin() + 5);
  int64_t newTokens = std::min<int64_t>(20, maxContext - 5);
  GpuRunResult generated;
  if (!gpuRun(*device, {.tokens = prompt, .newTokens = newTokens}, generated))
    return 1;
  std::vector<int64_t> fed = prompt;
  fed.insert(fed.end(), generated.generated.begin(), generated.generated.end() - 1);
  GpuRunResult replay;
  if (!gpuRun(*device, {.tokens = fed, .teacherForced = true, .keepLogits = true}, replay))
    return 1;
  std::vector<int64_t> replayed(replay.generated.begin() + prompt.size() - 1, replay.generated.end());
  report(static_cast<int64_t>(generated.generated.size()) == newTokens &&
             replayed == generated.generated && generated.stopReason == "limit",
         "generation of " + std::to_string(newTokens) + " tokens feeds each argmax back");
  std::vector<float> cpuReplay = cpuLogits(artifact, fed);
  int clear = 0, agree = 0;
  for (size_t i = 0; i < generated.generated.size(); ++i) {
    Row row = rowFacts(cpuReplay.data() + (prompt.size() - 1 + i) * vocab, vocab);
    if (row.gap < kClearGap)
      continue;
    ++clear;
    agree += static_cast<int64_t>(row.argmax) == generated.generated[i];
  }
  report(agree == clear, "the CPU chooses the same tokens (" + std::to_string(agree) + "/" +
                             std::to_string(clear) + " with a clear top-2 gap)");

  checkStepTimes(generated, "generation");
  report(generated.trace.empty(), "an untraced launch returns no trace");
  GpuRunResult traced;
  if (!gpuRun(*device, {.tokens = prompt, .newTokens = newTokens, .keepTrace = true}, traced))
    return 1;
  report(traced.generated == generated.generated, "a traced launch generates the same tokens");
  checkStepTimes(traced, "traced generation");
  checkTrace(traced, artifact.graph);

  checkSampling(*device, artifact, prompt, newTokens);
  checkStreaming(*device, prompt, newTokens, maxContext, generated);

  // EOS: the fourth new token ends generation at its first occurrence.
  int64_t eos = generated.generated[3];
  size_t stop = std::find(generated.generated.begin(), generated.generated.end(), eos) -
                generated.generated.begin();
  std::unique_ptr<BuiltArtifact> withEos = compile(*model, {eos});
  GpuRunResult stopped;
  if (!withEos || device->load(withEos->artifact, 0, error) != GpuStatus::Ok ||
      !gpuRun(*device, {.tokens = prompt, .newTokens = newTokens}, stopped))
    return 1;
  std::vector<int64_t> expected(generated.generated.begin(), generated.generated.begin() + stop + 1);
  report(stopped.generated == expected && stopped.stopReason == "eos",
         "EOS token " + std::to_string(eos) + " stops generation after " +
             std::to_string(stop + 1) + " tokens");

  // A wait no producer can satisfy: event 0 expects far more triggers, in
  // its record and in the queue entries' resolved waits.
  Artifact broken = withEos->artifact;
  MkBlobHeader header;
  std::memcpy(&header, broken.scheduleBlob.data(), sizeof header);
  MkEventRecord *events = reinterpret_cast<MkEventRecord *>(broken.scheduleBlob.data() + header.eventsOffset);
  events[0].triggerCount += 1000;
  MkQueueEntry *entries = reinterpret_cast<MkQueueEntry *>(broken.scheduleBlob.data() + header.entriesOffset);
  for (uint32_t k = 0; k < header.numTasks; ++k)
    for (uint32_t w = 0; w < entries[k].task.numWaits && w < MK_ENTRY_WAITS; ++w)
      if (entries[k].waits[w].event == 0)
        entries[k].waits[w].triggerCount = events[0].triggerCount;
  GpuRunResult hung;
  bool brokenLoaded = device->load(broken, 0, error) == GpuStatus::Ok;
  GpuStatus ran = brokenLoaded ? device->run({.tokens = prompt, .newTokens = 2}, hung, error)
                               : GpuStatus::Ok;
  report(brokenLoaded && ran == GpuStatus::Failed &&
             error.find("MK_ERROR_WAIT_TIMEOUT") != std::string::npos,
         "an unsatisfiable wait ends the launch as a device failure: " + error);

  // NaN weights under the logits.
  const WeightEntry *head = logitsWeight(artifact);
  std::vector<uint16_t> &data = built->weights.data;
  std::fill(data.begin() + head->offset, data.begin() + head->offset + head->rows * head->cols,
            uint16_t(0x7fc0));
  GpuRunResult poisoned;
  error.clear();
  bool poisonedLoaded = device->load(artifact, 0, error) == GpuStatus::Ok;
  ran = poisonedLoaded ? device->run({.tokens = prompt, .newTokens = 2}, poisoned, error)
                       : GpuStatus::Ok;
  report(poisonedLoaded && ran == GpuStatus::Failed &&
             error.find("MK_ERROR_NON_FINITE_LOGIT") != std::string::npos,
         "NaN logits end the launch as a device failure: " + error);

  // A kernel generated for another graph, one attention rotating two
  // dimensions fewer: the same tasks and events, one variant different.
  TaskGraph other = model->graph;
  auto attention = std::find_if(other.operations.begin(), other.operations.end(),
                                [](const Operation &op) {
                                  return op.kind == OpKind::Attention && op.rotaryDim >= 2;
                                });
  if (attention != other.operations.end()) {
    attention->rotaryDim -= 2;
    attention->invFreq.pop_back();
    auto otherKernel = compileMegakernel(other, model->schedule);
    Artifact mismatched = artifact;
    if (otherKernel)
      mismatched.cubin = std::move(otherKernel->cubin);
    error.clear();
    GpuStatus refused = otherKernel ? device->load(mismatched, 0, error) : GpuStatus::Failed;
    report(refused == GpuStatus::Refused && error.find("another graph") != std::string::npos,
           "a kernel lacking a variant of the schedule is refused at load: " + error);
  }
  checkTooBigForTheFreeMemory(*device, artifact);
  return failures == 0 ? 0 : 1;
}

} // namespace
} // namespace mk

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: mk-gpu-check (MODEL.onnx | --toy) [--max-context=N] [--kv-cache=bf16] "
                 "[--inline-merge] [--fuse-mlp] [--merge-in-o-proj] [--o-proj-by-head[=on|off]]\n");
    return 2;
  }
  int64_t maxContext = 2048;
  mk::TargetDescription target;
  for (int i = 2; i < argc; ++i) {
    if (mk::takeModelFlag(argv[i], maxContext, target))
      continue;
    if (std::strcmp(argv[i], "--inline-merge") == 0) {
      target.inlineMerge = true;
    } else if (std::strcmp(argv[i], "--fuse-mlp") == 0) {
      target.fuseMlp = true;
    } else {
      std::fprintf(stderr, "mk-gpu-check: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  return mk::checkFixture(argv[1], maxContext, target);
}
