#include "compiler/driver/CompilePhases.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace mk {

namespace {

constexpr int kBarWidth = 24;

std::string bar(int done, int total) {
  int filled = total > 0 ? done * kBarWidth / total : kBarWidth;
  return "[" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
}

} // namespace

CompilePhases::CompilePhases(int total) : total(total), terminal(llvm::errs().is_displayed()) {}

CompilePhases::Phase::Phase(CompilePhases *phases, const char *name)
    : phases(phases), name(name), start(std::chrono::steady_clock::now()) {
  if (phases && phases->terminal) {
    llvm::errs() << "\rmkc: " << bar(phases->done, phases->total) << " "
                 << (phases->done + 1) << "/" << phases->total << " " << name << "...";
    llvm::errs().flush();
  }
}

CompilePhases::Phase::~Phase() {
  if (!phases)
    return;
  ++phases->done;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // On a terminal, the finished line replaces the progress line (\x1b[K
  // clears what it leaves of it).
  llvm::errs() << (phases->terminal ? "\r\x1b[K" : "")
               << llvm::formatv("mkc: {0}/{1} {2,-10} {3,7:f2} s\n", phases->done, phases->total,
                                name, seconds);
}

} // namespace mk
