// What several kind descriptions share: tile labels and checks of the two
// tile shapes (rows of the output; a KV head, with or without a chunk).
#ifndef MKC_CORE_TASKGRAPH_KINDS_KINDHELPERS_H
#define MKC_CORE_TASKGRAPH_KINDS_KINDHELPERS_H

#include "core/taskgraph/OperationLayouts.h"
#include "core/taskgraph/StepRows.h"
#include "core/taskgraph/TaskKind.h"

#include <string>

namespace mk::kinds {

// Tiles of output rows [begin, end).
std::string describeRows(const Task &task);
std::string checkRows(const Operation &op, const Task &task);

// Tiles of the elements [begin, end) of an attention's output
// ([numHeads][headDim]), in whole q heads' dimensions.
std::string describeHeadElements(const Task &task);
std::string checkHeadElements(const Operation &op, const Task &task);

// Tiles of one KV head, `begin`.
std::string describeKvHead(const Task &task);
std::string checkKvHead(const Operation &op, const Task &task);

uint64_t noElements(const Operation &, const Task &);

inline BufferRange rangeOf(uint32_t buffer, uint64_t begin, uint64_t length) {
  return {buffer, begin, begin + length};
}

} // namespace mk::kinds

#endif
