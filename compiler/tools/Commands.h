// The subcommands of mkc that live in files of their own; main() in mkc.cpp
// dispatches to them with the arguments that follow the command's name, and
// answers `mkc COMMAND --help` with the command's help text.
#ifndef MKC_COMPILER_TOOLS_COMMANDS_H
#define MKC_COMPILER_TOOLS_COMMANDS_H

#include "llvm/ADT/Twine.h"

namespace mk {

// Exit codes of every mkc command, as each --help states them.
constexpr int kUsageError = 1; // the command line is wrong: unknown or malformed options
constexpr int kRefused = 2;    // the model, a file or the input was refused, or a write failed

// mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule|cuda|cubin|mk [-o OUT] ...
int compileCommand(int argc, char **argv);
extern const char *const kCompileHelp;

// mkc eval MODEL.onnx --tokens T0,T1,... --logits OUT.npy [--engine=reference|fused|schedule]
int evalCommand(int argc, char **argv);
extern const char *const kEvalHelp;

// mkc inspect MODEL.onnx|MODEL.mk [--format=text|json|dot] [--layer N] [-o FILE]
int inspectCommand(int argc, char **argv);
extern const char *const kInspectHelp;

// Prints "mkc: error: MESSAGE", the synopsis of `help` (its text up
// to the first blank line) and where the full help is, all on stderr;
// returns kUsageError.
int usageError(const char *command, const char *help, const llvm::Twine &message);

} // namespace mk

#endif
