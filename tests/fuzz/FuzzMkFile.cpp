// libFuzzer target: the .mk reader and the loader's checks (runtime/format,
// core/validator) on arbitrary bytes. A checksum only stops accidents, so a
// custom mutator also edits the sections of a file that parses and seals
// the checksums again: the edits then reach the manifest, task-graph and
// schedule decoders and the validator, which must refuse what is wrong. A
// task graph is also edited field by field, decoded and encoded again, so
// that a well-formed graph that lies (a wait removed, a range moved) reaches
// the validator's deeper checks; so is one step of ROWSTEPS, or its rows and
// sequences, or a wait's allRanks.
#include "runtime/format/ArtifactFile.h"
#include "runtime/format/MkFile.h"
#include "runtime/format/TaskGraphCodec.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

// The sections of `bytes`, read as the reader's placement rules allow but
// without their checksums (an input the mutator made, or a damaged one).
bool sectionsOf(const uint8_t *data, size_t size,
                std::vector<std::pair<mk::SectionKind, std::vector<uint8_t>>> &sections) {
  std::string error;
  auto file = mk::MkFile::view(std::span(data, size), error);
  if (!file)
    return false;
  for (const mk::SectionEntry &entry : file->entries())
    sections.push_back({static_cast<mk::SectionKind>(entry.kind),
                        std::vector<uint8_t>(data + entry.offset,
                                             data + entry.offset + entry.size)});
  return true;
}

// A value near `value`, or one at an edge: what a deliberate edit would try.
uint64_t nearby(std::minstd_rand &random, uint64_t value, uint64_t limit) {
  switch (random() % 6) {
  case 0:
    return 0;
  case 1:
    return value + 1;
  case 2:
    return value ? value - 1 : 0;
  case 3:
    return limit ? random() % limit : 0;
  case 4:
    return UINT32_MAX;
  default:
    return value * 2 + 1;
  }
}

// One field of the decoded task graph changed, the graph encoded again: a
// wait, a trigger, a tile, a range, an event's count, a buffer's size, the
// context, or two tasks swapped. False when the section does not decode.
bool editTaskGraph(std::vector<uint8_t> &bytes, std::minstd_rand &random) {
  mk::TaskGraph graph;
  mk::Schedule schedule;
  if (!mk::decodeTaskGraph(bytes, graph, schedule).empty() || graph.tasks.empty())
    return false;
  mk::Task &task = graph.tasks[random() % graph.tasks.size()];
  uint64_t events = graph.events.size(), buffers = graph.buffers.size();
  switch (random() % 8) {
  case 0:
    if (task.waits.empty() || random() % 3 == 0)
      task.waits.push_back({static_cast<uint32_t>(nearby(random, 0, events)), 0});
    else if (random() % 2)
      task.waits.erase(task.waits.begin() + random() % task.waits.size());
    else if (random() % 4 == 0)
      task.waits[random() % task.waits.size()].allRanks ^= true;
    else
      task.waits[random() % task.waits.size()].event = static_cast<uint32_t>(
          nearby(random, task.waits[0].event, events));
    break;
  case 1:
    task.trigger = static_cast<uint32_t>(nearby(random, task.trigger, events));
    break;
  case 2:
    (random() % 2 ? task.begin : task.end) = nearby(random, task.end, task.end + 2);
    break;
  case 3: {
    std::vector<mk::BufferRange> &ranges = random() % 2 ? task.reads : task.writes;
    if (ranges.empty())
      return false;
    mk::BufferRange &range = ranges[random() % ranges.size()];
    switch (random() % 3) {
    case 0:
      range.buffer = static_cast<uint32_t>(nearby(random, range.buffer, buffers));
      break;
    case 1:
      range.begin = nearby(random, range.begin, range.end + 1);
      break;
    default:
      range.end = nearby(random, range.end, range.end + 64);
    }
    break;
  }
  case 4:
    if (events == 0)
      return false;
    graph.events[random() % events].triggerCount ^= 1u << (random() % 4);
    break;
  case 5:
    if (buffers == 0)
      return false;
    graph.buffers[random() % buffers].elements =
        nearby(random, graph.buffers[0].elements, 1u << 20);
    break;
  case 6:
    if (random() % 2)
      graph.maxContext = static_cast<int64_t>(nearby(random, graph.maxContext, 1u << 21));
    else if (random() % 2)
      graph.rows = static_cast<int64_t>(nearby(random, graph.rows, 2048));
    else
      graph.sequences = static_cast<int64_t>(nearby(random, graph.sequences, 2048));
    break;
  default:
    std::swap(task, graph.tasks[random() % graph.tasks.size()]);
  }
  bytes = mk::encodeTaskGraph(graph, schedule);
  return true;
}

// One step of ROWSTEPS edited as editTaskGraph edits TASKGRAPH.
bool editRowSteps(std::vector<uint8_t> &bytes, std::minstd_rand &random) {
  std::vector<mk::ScheduledGraph> steps;
  if (!mk::decodeRowSteps(bytes, steps).empty() || steps.empty())
    return false;
  mk::ScheduledGraph &step = steps[random() % steps.size()];
  std::vector<uint8_t> encoded = mk::encodeTaskGraph(step.graph, step.schedule);
  if (!editTaskGraph(encoded, random) ||
      !mk::decodeTaskGraph(encoded, step.graph, step.schedule).empty())
    return false;
  bytes = mk::encodeRowSteps(steps);
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto file = mk::MkFile::view(std::span(data, size), error);
  if (!file)
    return 0;
  // loadArtifact decodes every section and validates the task graph.
  (void)mk::loadArtifact(std::move(file), error);
  return 0;
}

// Half the time: mutate one section of a sound file (its bytes, or for the
// task graph one decoded field) and write it again with fresh checksums;
// else libFuzzer's own byte-level mutations.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::minstd_rand random(seed);
  std::vector<std::pair<mk::SectionKind, std::vector<uint8_t>>> sections;
  if (random() % 2 == 0 || !sectionsOf(data, size, sections) || sections.empty())
    return LLVMFuzzerMutate(data, size, maxSize);
  auto &[kind, target] = sections[random() % sections.size()];
  bool edited = random() % 2 == 0 &&
                ((kind == mk::SectionKind::TaskGraph && editTaskGraph(target, random)) ||
                 (kind == mk::SectionKind::RowSteps && editRowSteps(target, random)));
  if (!edited) {
    size_t room = target.size() + 64;
    target.resize(room);
    target.resize(LLVMFuzzerMutate(target.data(), room - 64, room));
  }
  std::vector<mk::SectionData> views;
  for (const auto &[kind, bytes] : sections)
    views.push_back({kind, bytes});
  std::ostringstream out;
  std::string error;
  if (!mk::writeMkFile(out, views, error))
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string written = out.str();
  if (written.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, written.data(), written.size());
  return written.size();
}
