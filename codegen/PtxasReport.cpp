#include "codegen/PtxasReport.h"

#include <regex>
#include <sstream>

namespace mk {

namespace {

// The number before `unit` in `line`, e.g. 128 of "Used 128 registers".
std::optional<int> numberBefore(const std::string &line, const std::string &unit) {
  std::smatch match;
  if (!std::regex_search(line, match, std::regex("([0-9]+) " + unit)))
    return std::nullopt;
  return std::stoi(match[1]);
}

} // namespace

std::optional<PtxasReport> parsePtxasReport(const std::string &log, const std::string &kernel) {
  std::istringstream lines(log);
  std::string line;
  bool inKernel = false, found = false;
  PtxasReport report;
  while (std::getline(lines, line)) {
    // Each function's lines follow its "Compiling entry function" or
    // "Function properties for" line.
    if (line.find("Compiling entry function") != std::string::npos ||
        line.find("Function properties for") != std::string::npos) {
      bool named = line.find("'" + kernel + "'") != std::string::npos ||
                   line.find("for " + kernel) != std::string::npos;
      inKernel = named;
      continue;
    }
    if (!inKernel)
      continue;
    if (auto stack = numberBefore(line, "bytes stack frame")) {
      report.stackFrameBytes = *stack;
      report.spillStoreBytes = numberBefore(line, "bytes spill stores").value_or(0);
      report.spillLoadBytes = numberBefore(line, "bytes spill loads").value_or(0);
    }
    if (auto registers = numberBefore(line, "registers")) {
      report.registers = *registers;
      report.staticSharedBytes = numberBefore(line, "bytes smem").value_or(0);
      found = true;
    }
  }
  if (!found)
    return std::nullopt;
  return report;
}

} // namespace mk
