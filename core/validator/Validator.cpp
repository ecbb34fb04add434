#include "core/validator/Validator.h"

#include "core/validator/Ancestry.h"
#include "core/validator/ValidatorChecks.h"

namespace mk {

std::string validateStructure(const TaskGraph &graph, const Schedule &schedule) {
  if (std::string problem = validation::checkGraph(graph); !problem.empty())
    return problem;
  if (std::string problem = validation::checkQueues(graph, schedule); !problem.empty())
    return problem;
  return validation::checkDeadlockFree(graph, schedule);
}

std::string validateSchedule(const TaskGraph &graph, const Schedule &schedule) {
  if (std::string problem = validateStructure(graph, schedule); !problem.empty())
    return problem;
  if (std::string problem = validation::checkTaskOrder(graph); !problem.empty())
    return problem;
  validation::Ancestry ancestry;
  if (std::string problem = validation::Ancestry::build(graph, ancestry); !problem.empty())
    return problem;
  if (std::string problem = validation::checkDataflow(graph, ancestry); !problem.empty())
    return problem;
  return validation::checkStepOrder(graph, ancestry);
}

} // namespace mk
