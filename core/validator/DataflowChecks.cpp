// The dataflow of one step, on the accesses tasks really make: what a task
// declares must agree with them, each element has exactly one writer, and
// every element read has a writer that happens before the reader. An
// element tasks add into (Task::accumulates) is a read of its writer (the
// seed) for each of them, and a reader of it must follow all of them. Writers
// are kept per buffer as sorted disjoint intervals, so a read costs a binary
// search plus one happens-before test per writer it overlaps.
#include "core/validator/Ancestry.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskNames.h"
#include "core/taskgraph/TaskFootprint.h"
#include "core/validator/ValidatorChecks.h"

#include <algorithm>
#include <span>

namespace mk::validation {

namespace {

std::string describeRanges(const TaskGraph &graph, const std::vector<BufferRange> &ranges) {
  std::string text;
  for (const BufferRange &range : ranges)
    text += (text.empty() ? "" : ", ") + describeRange(graph, range);
  return text.empty() ? "nothing" : text;
}

std::string checkDeclared(const TaskGraph &graph, uint32_t index, const TaskFootprint &derived) {
  const Task &task = graph.tasks[index];
  std::vector<BufferRange> declaredWrites = normalizeRanges(task.writes);
  std::vector<BufferRange> actualWrites = normalizeRanges(derived.writes);
  if (declaredWrites != actualWrites)
    return cat(describeTask(graph, index), " declares that it writes ",
               describeRanges(graph, declaredWrites), ", but it writes ",
               describeRanges(graph, actualWrites));
  if (normalizeRanges(task.accumulates) != normalizeRanges(derived.accumulates))
    return cat(describeTask(graph, index), " declares that it adds into ",
               describeRanges(graph, normalizeRanges(task.accumulates)), ", but it adds into ",
               describeRanges(graph, normalizeRanges(derived.accumulates)));
  std::vector<BufferRange> declaredReads = normalizeRanges(task.reads);
  for (const BufferRange &read : derived.reads)
    if (!rangesCover(declaredReads, read))
      return cat(describeTask(graph, index), " reads ", describeRange(graph, read),
                 ", which its declared reads (", describeRanges(graph, declaredReads),
                 ") do not cover");
  return "";
}

struct Writer {
  uint64_t begin, end;
  uint32_t task;
};

// Per buffer, the writers of one step sorted by their first element.
class WriterIndex {
public:
  WriterIndex(const TaskGraph &graph, const std::vector<TaskFootprint> &footprints)
      : writers(graph.buffers.size()) {
    for (uint32_t task = 0; task < footprints.size(); ++task)
      for (const BufferRange &range : footprints[task].writes)
        if (range.begin < range.end)
          writers[range.buffer].push_back({range.begin, range.end, task});
    for (auto &list : writers)
      std::sort(list.begin(), list.end(),
                [](const Writer &a, const Writer &b) { return a.begin < b.begin; });
  }

  std::string checkDisjoint(const TaskGraph &graph) const {
    for (uint32_t buffer = 0; buffer < writers.size(); ++buffer) {
      const auto &list = writers[buffer];
      for (size_t i = 1; i < list.size(); ++i)
        if (list[i].begin < list[i - 1].end)
          return cat(describeTask(graph, list[i - 1].task), " and ",
                     describeTask(graph, list[i].task), " both write ",
                     describeRange(graph, {buffer, list[i].begin,
                                           std::min(list[i].end, list[i - 1].end)}),
                     " in one step");
    }
    return "";
  }

  // The writers overlapping `range`, in order; needs checkDisjoint to have
  // passed, so that their ends are sorted too.
  std::span<const Writer> overlapping(const BufferRange &range) const {
    const auto &list = writers[range.buffer];
    auto first = std::partition_point(list.begin(), list.end(),
                                      [&](const Writer &w) { return w.end <= range.begin; });
    auto last = std::partition_point(first, list.end(),
                                     [&](const Writer &w) { return w.begin < range.end; });
    return {first, last};
  }

private:
  std::vector<std::vector<Writer>> writers;
};

// Every element of `read` is written, by tasks in `ancestors`.
std::string checkRead(const TaskGraph &graph, const WriterIndex &writers, uint32_t reader,
                      const TaskSet &ancestors, const BufferRange &read) {
  uint64_t covered = read.begin;
  for (const Writer &writer : writers.overlapping(read)) {
    if (writer.begin > covered)
      break;
    if (!ancestors.contains(writer.task))
      return cat(describeTask(graph, reader), " reads ",
                 describeRange(graph, {read.buffer, std::max(read.begin, writer.begin),
                                       std::min(read.end, writer.end)}),
                 ", which ", describeTask(graph, writer.task),
                 " writes, but no chain of waits (step offset 0) makes it wait for that task");
    covered = writer.end;
  }
  if (covered < read.end)
    return cat(describeTask(graph, reader), " reads ",
               describeRange(graph, {read.buffer, covered, read.end}),
               ", but no task writes ", covered + 1 < read.end ? "those elements" : "that element",
               " in the step");
  return "";
}

// The tasks adding into one buffer, each with its ranges of it.
struct Adder {
  uint32_t task;
  std::vector<BufferRange> ranges;
};

// Every task adding into an element the reader reads of `buffer` happens
// before the reader. An adder that is an ancestor needs no look at the
// ranges, so a valid graph costs one bit test per (reader, adder) pair,
// whatever the rows of the step.
std::string checkReadAfterAdditions(const TaskGraph &graph, const std::vector<Adder> &adders,
                                    uint32_t reader, const TaskSet &ancestors,
                                    const std::vector<BufferRange> &reads, uint32_t buffer) {
  for (const Adder &adder : adders) {
    if (adder.task == reader || ancestors.contains(adder.task))
      continue;
    for (const BufferRange &read : reads)
      for (const BufferRange &added : adder.ranges)
        if (read.buffer == buffer && added.begin < read.end && read.begin < added.end)
          return cat(describeTask(graph, reader), " reads ",
                     describeRange(graph, {buffer, std::max(read.begin, added.begin),
                                           std::min(read.end, added.end)}),
                     ", which ", describeTask(graph, adder.task),
                     " adds into, but no chain of waits (step offset 0) makes it wait for that "
                     "task");
  }
  return "";
}

// Tensor parallel: every writer of `read` on the other ranks (the same task
// ids there) is waited on directly, on every rank: an allRanks wait, step
// offset 0, on the event it triggers.
std::string checkPeerRead(const TaskGraph &graph, const WriterIndex &writers, uint32_t reader,
                          const BufferRange &read) {
  const Task &task = graph.tasks[reader];
  for (const Writer &writer : writers.overlapping(read)) {
    uint32_t event = graph.tasks[writer.task].trigger;
    bool waited = std::any_of(task.waits.begin(), task.waits.end(), [&](const Wait &wait) {
      return wait.event == event && wait.stepOffset == 0 && wait.allRanks;
    });
    if (!waited)
      return cat(describeTask(graph, reader), " reads ", describeRange(graph, read),
                 " on the other ranks, which ", describeTask(graph, writer.task),
                 " writes there, but it does not wait on every rank's ",
                 describeEvent(graph, event));
  }
  return "";
}

} // namespace

std::string checkDataflow(const TaskGraph &graph, const Ancestry &ancestry) {
  std::vector<TaskFootprint> footprints;
  footprints.reserve(graph.tasks.size());
  for (uint32_t task = 0; task < graph.tasks.size(); ++task) {
    footprints.push_back(deriveFootprint(graph, graph.tasks[task]));
    if (std::string problem = checkDeclared(graph, task, footprints.back()); !problem.empty())
      return problem;
  }
  WriterIndex writers(graph, footprints);
  if (std::string problem = writers.checkDisjoint(graph); !problem.empty())
    return problem;
  for (uint32_t task = 0; task < graph.tasks.size(); ++task)
    for (const BufferRange &read : footprints[task].peerReads)
      if (std::string problem = checkPeerRead(graph, writers, task, read); !problem.empty())
        return problem;
  std::vector<std::vector<Adder>> adders(graph.buffers.size());
  for (uint32_t task = 0; task < footprints.size(); ++task)
    for (const BufferRange &range : footprints[task].accumulates) {
      auto &list = adders[range.buffer];
      if (list.empty() || list.back().task != task)
        list.push_back({task, {}});
      list.back().ranges.push_back(range);
    }
  for (uint32_t task = 0; task < graph.tasks.size(); ++task) {
    TaskSet ancestors = ancestry.ancestorsOf(task);
    std::vector<uint32_t> addedBuffersRead;
    for (const BufferRange &read : footprints[task].reads) {
      // The token is written by the previous step's Argmax; checkStepOrder
      // orders whole steps.
      if (graph.buffers[read.buffer].kind == BufferKind::Token)
        continue;
      if (std::string problem = checkRead(graph, writers, task, ancestors, read); !problem.empty())
        return problem;
      if (!adders[read.buffer].empty() &&
          std::find(addedBuffersRead.begin(), addedBuffersRead.end(), read.buffer) ==
              addedBuffersRead.end())
        addedBuffersRead.push_back(read.buffer);
    }
    for (uint32_t buffer : addedBuffersRead)
      if (std::string problem = checkReadAfterAdditions(graph, adders[buffer], task, ancestors,
                                                        footprints[task].reads, buffer);
          !problem.empty())
        return problem;
    // An addition needs its elements' seed before it; only a fixed64
    // buffer sums exactly in any order.
    for (const BufferRange &added : footprints[task].accumulates) {
      if (!keepsFixed64(graph, added.buffer))
        return cat(describeTask(graph, task), " adds into ", describeRange(graph, added),
                   ", which is not fixed64");
      if (std::string problem = checkRead(graph, writers, task, ancestors, added); !problem.empty())
        return problem;
    }
  }
  // Whole buffers are written every step: the logits are handed to the
  // caller, and an element nobody writes is memory an executor would
  // allocate for nothing (for a KV cache: a row's slot left partly empty).
  for (uint32_t buffer = 0; buffer < graph.buffers.size(); ++buffer) {
    const Buffer &named = graph.buffers[buffer];
    if (named.kind == BufferKind::Token)
      continue;
    uint64_t length = rangeExtent(graph, named);
    uint64_t covered = 0;
    for (const Writer &writer : writers.overlapping({buffer, 0, length}))
      if (writer.begin == covered)
        covered = writer.end;
    if (covered < length)
      return cat("no task writes ", describeRange(graph, {buffer, covered, length}),
                 " in a step; every element of a buffer must have a writer");
  }
  return "";
}

} // namespace mk::validation
