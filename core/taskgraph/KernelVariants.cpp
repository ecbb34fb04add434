#include "core/taskgraph/KernelVariants.h"

#include "core/taskgraph/TaskKind.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace mk {

KernelVariants listKernelVariants(const TaskGraph &graph) {
  using Key = std::tuple<TaskKind, std::vector<int64_t>>;
  std::map<Key, std::vector<std::string>> operations;
  std::vector<Key> keyOfTask;
  for (const Task &task : graph.tasks) {
    const Operation &op = graph.operations[task.op];
    Key key{task.kind, describeKind(task.kind).variantArguments(graph, op)};
    std::vector<std::string> &names = operations[key];
    if (std::find(names.begin(), names.end(), op.name) == names.end())
      names.push_back(op.name);
    keyOfTask.push_back(std::move(key));
  }
  KernelVariants result;
  std::map<Key, uint32_t> number;
  for (auto &[key, names] : operations) {
    number.emplace(key, static_cast<uint32_t>(result.variants.size()));
    result.variants.push_back({std::get<0>(key), std::get<1>(key), std::move(names)});
  }
  for (const Key &key : keyOfTask)
    result.ofTask.push_back(number.at(key));
  return result;
}

std::string describeVariant(TaskKind kind, const std::vector<int64_t> &arguments) {
  if (!isTaskKind(kind))
    return "task kind " + std::to_string(static_cast<int>(kind)) + " (unknown)";
  const TaskKindDescription &description = describeKind(kind);
  std::string text = std::string(description.name) + "(";
  for (size_t i = 0; i < arguments.size(); ++i) {
    VariantParameter parameter = i < description.variantParameters.size()
                                     ? description.variantParameters[i]
                                     : VariantParameter{"?"};
    text += (i ? ", " : "") + std::string(parameter.name) + " " +
            spellVariantArgument(parameter, arguments[i]);
  }
  return text + ")";
}

} // namespace mk
