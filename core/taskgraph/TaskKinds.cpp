// The registry of task kind descriptions, by opcode.
#include "core/taskgraph/TaskKind.h"

#include <iterator>

namespace mk {

namespace kinds {
#define MK_DECLARE_KIND(Name, NAME, opcode) extern const TaskKindDescription k##Name##Kind;
MK_TASK_KINDS(MK_DECLARE_KIND)
#undef MK_DECLARE_KIND
} // namespace kinds

namespace {

#define MK_KIND_ENTRY(Name, NAME, opcode) &kinds::k##Name##Kind,
const TaskKindDescription *const kDescriptions[] = {MK_TASK_KINDS(MK_KIND_ENTRY)};
#undef MK_KIND_ENTRY
static_assert(std::size(kDescriptions) == kNumTaskKinds, "one description per task kind");

} // namespace

std::string spellBoolean(int64_t value) { return value ? "true" : "false"; }

std::string spellEpilogue(int64_t value) {
  switch (static_cast<Epilogue>(value)) {
  case Epilogue::None:
    return "MK_EPILOGUE_NONE";
  case Epilogue::SiluMul:
    return "MK_EPILOGUE_SILU_MUL";
  case Epilogue::Residual:
    return "MK_EPILOGUE_RESIDUAL";
  case Epilogue::GeluTanhMul:
    return "MK_EPILOGUE_GELU_TANH_MUL";
  }
  return std::to_string(value);
}

std::string spellVariantArgument(const VariantParameter &parameter, int64_t value) {
  return parameter.spell ? parameter.spell(value) : std::to_string(value);
}

bool isTaskKind(TaskKind kind) { return static_cast<size_t>(kind) < kNumTaskKinds; }

const TaskKindDescription &describeKind(TaskKind kind) {
  return *kDescriptions[static_cast<size_t>(kind)];
}

} // namespace mk
