// One description of the encoding, code(), drives both directions: the
// Encoder appends each field, the Decoder reads it back with bounds checks.
// Encoding and decoding cannot drift apart.
#include "runtime/format/TaskGraphCodec.h"

#include <bit>
#include <cstring>
#include <type_traits>

namespace mk {

namespace {

class Encoder {
public:
  std::vector<uint8_t> bytes;

  void u8(uint8_t value) { bytes.push_back(value); }
  void u32(uint32_t value) { put(value); }
  void i32(int32_t value) { put(static_cast<uint32_t>(value)); }
  void u64(uint64_t value) { put(value); }
  void i64(int64_t value) { put(static_cast<uint64_t>(value)); }
  void f32(float value) { put(std::bit_cast<uint32_t>(value)); }
  void boolean(bool value) { u8(value ? 1 : 0); }
  void string(const std::string &value) {
    u32(static_cast<uint32_t>(value.size()));
    bytes.insert(bytes.end(), value.begin(), value.end());
  }
  // A u64 length, then the bytes: a nested encoding.
  void blob(const std::vector<uint8_t> &value) {
    u64(value.size());
    bytes.insert(bytes.end(), value.begin(), value.end());
  }
  template <class Enum> void enumeration(Enum value, Enum) { u8(static_cast<uint8_t>(value)); }
  template <class T, class Each>
  void list(const std::vector<T> &items, const char *, size_t, Each &&each) {
    u32(static_cast<uint32_t>(items.size()));
    for (const T &item : items)
      each(item);
  }

private:
  template <class T> void put(T value) {
    for (size_t i = 0; i < sizeof(T); ++i)
      bytes.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
};

class Decoder {
public:
  explicit Decoder(std::span<const uint8_t> bytes) : bytes(bytes) {}

  bool failed() const { return !error.empty(); }
  size_t position() const { return at; }
  size_t remaining() const { return bytes.size() - at; }
  void fail(const std::string &problem) {
    if (error.empty())
      error = problem + " at byte " + std::to_string(at) + context();
  }
  const std::string &problem() const { return error; }

  void u8(uint8_t &value) { value = static_cast<uint8_t>(get(1)); }
  void u32(uint32_t &value) { value = static_cast<uint32_t>(get(4)); }
  void i32(int32_t &value) { value = static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  void u64(uint64_t &value) { value = get(8); }
  void i64(int64_t &value) { value = static_cast<int64_t>(get(8)); }
  void f32(float &value) { value = std::bit_cast<float>(static_cast<uint32_t>(get(4))); }
  void boolean(bool &value) {
    uint64_t raw = get(1);
    if (raw > 1)
      fail("a boolean is " + std::to_string(raw));
    value = raw == 1;
  }
  void string(std::string &value) {
    uint64_t length = get(4);
    if (length > remaining())
      return fail("a string of " + std::to_string(length) + " bytes runs past the end");
    value.assign(reinterpret_cast<const char *>(bytes.data() + at), length);
    at += length;
  }
  void blob(std::vector<uint8_t> &value) {
    uint64_t length = get(8);
    if (length > remaining())
      return fail(std::to_string(length) + " bytes run past the end");
    value.assign(bytes.begin() + at, bytes.begin() + at + length);
    at += length;
  }
  template <class Enum> void enumeration(Enum &value, Enum last) {
    uint64_t raw = get(1);
    if (raw > static_cast<uint64_t>(last))
      fail("unknown enumerator " + std::to_string(raw));
    value = failed() ? Enum{} : static_cast<Enum>(raw);
  }
  // `minBytes`: the fewest bytes one item takes, so a corrupt count cannot
  // make the decoder allocate more than the section could hold.
  template <class T, class Each>
  void list(std::vector<T> &items, const char *what, size_t minBytes, Each &&each) {
    uint64_t count = get(4);
    if (count > remaining() / minBytes)
      return fail(std::string("a count of ") + std::to_string(count) + " (" + what +
                  ") runs past the end");
    items.assign(count, T{});
    for (uint64_t i = 0; i < count && !failed(); ++i) {
      path.push_back(std::string(what) + " " + std::to_string(i));
      each(items[i]);
      path.pop_back();
    }
  }

private:
  uint64_t get(size_t size) {
    if (failed())
      return 0;
    if (size > remaining()) {
      fail("truncated");
      return 0;
    }
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i)
      value |= uint64_t(bytes[at + i]) << (8 * i);
    at += size;
    return value;
  }
  std::string context() const {
    std::string text;
    for (const std::string &part : path)
      text += (text.empty() ? " (" : ", ") + part;
    return text.empty() ? text : text + ")";
  }

  std::span<const uint8_t> bytes;
  size_t at = 0;
  std::string error;
  std::vector<std::string> path;
};

// Smallest encodings, for Decoder::list.
constexpr size_t kMinBuffer = 14, kMinOperation = 207, kMinTask = 58, kMinEvent = 12;
constexpr size_t kMinWeightRef = 20, kMinWait = 8, kMinRange = 20, kMinQueue = 4;

template <class Codec, class Ref> void codeWeightRef(Codec &c, Ref &ref) {
  c.string(ref.name);
  c.u64(ref.rows);
  c.u64(ref.cols);
}

template <class Codec, class Op> void codeOperation(Codec &c, Op &op) {
  auto weightRef = [&](auto &ref) { codeWeightRef(c, ref); };
  c.enumeration(op.kind, OpKind::Mlp);
  c.string(op.name);
  c.i32(op.layer);
  c.u32(op.input);
  c.u32(op.output);
  c.u32(op.residual);
  c.list(op.weights, "weight", kMinWeightRef, weightRef);
  c.list(op.biases, "bias", kMinWeightRef, weightRef);
  weightRef(op.norm);
  c.f32(op.eps);
  c.enumeration(op.epilogue, Epilogue::GeluTanhMul);
  c.u64(op.inputLength);
  c.u64(op.outputLength);
  c.i64(op.numHeads);
  c.i64(op.numKvHeads);
  c.i64(op.headDim);
  c.f32(op.scale);
  weightRef(op.qNorm);
  weightRef(op.kNorm);
  c.i64(op.rotaryDim);
  c.list(op.invFreq, "inverse frequency", 4, [&](auto &value) { c.f32(value); });
  c.boolean(op.interleaved);
  c.u32(op.keyCache);
  c.u32(op.valueCache);
  c.u32(op.partials);
  c.i64(op.window);
  c.i64(op.chunkSize);
  c.i64(op.numChunks);
  c.i64(op.chunksPerRound);
  c.u32(op.picks);
  c.i64(op.numPicks);
  c.i64(op.sliceWidth);
  c.u32(op.seed);
}

template <class Codec, class T> void codeTask(Codec &c, T &task) {
  auto range = [&](auto &r) {
    c.u32(r.buffer);
    c.u64(r.begin);
    c.u64(r.end);
  };
  c.u32(task.id);
  c.enumeration(task.kind, static_cast<TaskKind>(kNumTaskKinds - 1));
  c.u32(task.op);
  c.u64(task.begin);
  c.u64(task.end);
  c.u32(task.ordinal);
  c.boolean(task.runsInline);
  c.list(task.waits, "wait", kMinWait, [&](auto &wait) {
    c.u32(wait.event);
    c.i32(wait.stepOffset);
    c.boolean(wait.allRanks);
  });
  c.u32(task.trigger);
  c.list(task.reads, "read", kMinRange, range);
  c.list(task.writes, "write", kMinRange, range);
  c.list(task.accumulates, "addition", kMinRange, range);
  c.u64(task.weightBytes);
}

template <class Codec, class G, class S> void code(Codec &c, G &graph, S &schedule) {
  c.i64(graph.maxContext);
  c.i64(graph.rows);
  c.i64(graph.sequences);
  c.i64(graph.ranks);
  c.i64(graph.rank);
  c.u32(graph.tokenBuffer);
  c.u32(graph.logitsBuffer);
  c.list(graph.buffers, "buffer", kMinBuffer, [&](auto &buffer) {
    c.string(buffer.name);
    c.enumeration(buffer.kind, BufferKind::Token);
    c.u64(buffer.elements);
    c.enumeration(buffer.element, BufferElement::Fixed64);
  });
  c.list(graph.operations, "operation", kMinOperation, [&](auto &op) { codeOperation(c, op); });
  c.list(graph.tasks, "task", kMinTask, [&](auto &task) { codeTask(c, task); });
  c.list(graph.events, "event", kMinEvent, [&](auto &event) {
    c.u32(event.id);
    c.string(event.name);
    c.u32(event.triggerCount);
  });
  c.u32(schedule.numSms);
  c.list(schedule.queues, "queue", kMinQueue,
         [&](auto &queue) { c.list(queue, "queued task", 4, [&](auto &task) { c.u32(task); }); });
}

} // namespace

std::vector<uint8_t> encodeTaskGraph(const TaskGraph &graph, const Schedule &schedule) {
  Encoder encoder;
  encoder.u32(kTaskGraphMagic);
  encoder.u32(kTaskGraphVersion);
  code(encoder, graph, schedule);
  return std::move(encoder.bytes);
}

std::string decodeTaskGraph(std::span<const uint8_t> bytes, TaskGraph &graph, Schedule &schedule) {
  Decoder decoder(bytes);
  uint32_t magic = 0, version = 0;
  decoder.u32(magic);
  if (!decoder.failed() && magic != kTaskGraphMagic)
    return "task graph: bad magic at byte 0 (expected \"MKTG\")";
  decoder.u32(version);
  if (!decoder.failed() && version != kTaskGraphVersion)
    return "task graph: unsupported encoding version " + std::to_string(version) +
           " (this reader supports " + std::to_string(kTaskGraphVersion) + ")";
  TaskGraph decodedGraph;
  Schedule decodedSchedule;
  code(decoder, decodedGraph, decodedSchedule);
  if (!decoder.failed() && decoder.remaining() != 0)
    decoder.fail(std::to_string(decoder.remaining()) + " trailing bytes");
  if (decoder.failed())
    return "task graph: " + decoder.problem();
  graph = std::move(decodedGraph);
  schedule = std::move(decodedSchedule);
  return "";
}

namespace {

// The sections of several task graphs: ROWSTEPS is a list of them, RANKS the
// ranks' list nested as one blob, then the weight slices. Each graph is
// encodeTaskGraph's bytes, magic and version included.
constexpr size_t kMinGraphBlob = 8, kMinSlice = 4 + 4 + 4 * 8 + 1; // bytes of the least one

template <class Codec, class Slice> void codeSlice(Codec &c, Slice &slice) {
  c.string(slice.name);
  c.string(slice.source);
  c.u64(slice.rowBegin);
  c.u64(slice.rowEnd);
  c.u64(slice.colBegin);
  c.u64(slice.colEnd);
  c.boolean(slice.zero);
}

std::vector<uint8_t> encodeGraphs(const std::vector<ScheduledGraph> &graphs) {
  Encoder encoder;
  std::vector<std::vector<uint8_t>> blobs;
  for (const ScheduledGraph &graph : graphs)
    blobs.push_back(encodeTaskGraph(graph.graph, graph.schedule));
  encoder.list(blobs, "step", kMinGraphBlob, [&](const auto &blob) { encoder.blob(blob); });
  return std::move(encoder.bytes);
}

// The graphs of `decoder`'s list, each decoded; "" or the first problem.
std::string decodeGraphs(Decoder &decoder, std::vector<ScheduledGraph> &graphs) {
  uint32_t count = 0;
  decoder.u32(count);
  if (decoder.failed())
    return decoder.problem();
  // Read one by one, so that a corrupt count stops at the first step that
  // is not there rather than allocating for it.
  std::vector<std::vector<uint8_t>> blobs;
  std::vector<size_t> starts;
  for (uint32_t index = 0; index < count; ++index) {
    starts.push_back(decoder.position() + 8);
    decoder.blob(blobs.emplace_back());
    if (decoder.failed())
      return "step " + std::to_string(index) + ": " + decoder.problem();
  }
  graphs.assign(blobs.size(), {});
  for (size_t index = 0; index < blobs.size(); ++index)
    if (std::string problem = decodeTaskGraph(blobs[index], graphs[index].graph,
                                              graphs[index].schedule);
        !problem.empty())
      return "step " + std::to_string(index) + " at byte " + std::to_string(starts[index]) +
             ": " + problem;
  return "";
}

} // namespace

std::vector<uint8_t> encodeRowSteps(const std::vector<ScheduledGraph> &steps) {
  return encodeGraphs(steps);
}

std::string decodeRowSteps(std::span<const uint8_t> bytes, std::vector<ScheduledGraph> &steps) {
  steps.clear();
  if (bytes.empty())
    return "";
  if (bytes.size() < 4)
    return "a count of steps needs 4 bytes, the section has " + std::to_string(bytes.size());
  Decoder decoder(bytes);
  std::vector<ScheduledGraph> decoded;
  if (std::string problem = decodeGraphs(decoder, decoded); !problem.empty())
    return problem;
  if (decoder.remaining() != 0)
    return std::to_string(decoder.remaining()) + " trailing bytes at byte " +
           std::to_string(decoder.position());
  steps = std::move(decoded);
  return "";
}

std::vector<uint8_t> encodeRanks(const std::vector<ScheduledGraph> &ranks,
                                 const std::vector<WeightSlice> &slices) {
  Encoder encoder;
  encoder.blob(encodeGraphs(ranks));
  encoder.list(slices, "weight slice", kMinSlice, [&](const auto &slice) { codeSlice(encoder, slice); });
  return std::move(encoder.bytes);
}

std::string decodeRanks(std::span<const uint8_t> bytes, std::vector<ScheduledGraph> &ranks,
                        std::vector<WeightSlice> &slices) {
  ranks.clear();
  slices.clear();
  if (bytes.empty())
    return "";
  Decoder decoder(bytes);
  std::vector<uint8_t> graphBytes;
  decoder.blob(graphBytes);
  std::vector<WeightSlice> decodedSlices;
  decoder.list(decodedSlices, "weight slice", kMinSlice,
               [&](auto &slice) { codeSlice(decoder, slice); });
  if (!decoder.failed() && decoder.remaining() != 0)
    decoder.fail(std::to_string(decoder.remaining()) + " trailing bytes");
  if (decoder.failed())
    return decoder.problem();
  Decoder graphs(graphBytes);
  std::vector<ScheduledGraph> decodedRanks;
  if (std::string problem = decodeGraphs(graphs, decodedRanks); !problem.empty())
    return "the ranks' graphs: " + problem;
  if (graphs.remaining() != 0)
    return "the ranks' graphs: " + std::to_string(graphs.remaining()) + " trailing bytes";
  ranks = std::move(decodedRanks);
  slices = std::move(decodedSlices);
  return "";
}

} // namespace mk
