// The subcommands of mkc that live in files of their own; main() in mkc.cpp
// dispatches to them with the arguments that follow the command's name.
#ifndef MKC_COMPILER_TOOLS_COMMANDS_H
#define MKC_COMPILER_TOOLS_COMMANDS_H

namespace mk {

// Exit codes of every mkc command.
constexpr int kUsageError = 1;
constexpr int kRefused = 2;

// mkc compile MODEL.onnx --emit=mlir|fused|tasks|schedule|cuda|cubin|mk [-o OUT] [--print-ir-after-all]
int compileCommand(int argc, char **argv);

// mkc eval MODEL.onnx --tokens T0,T1,... --logits OUT.npy [--engine=reference|fused|schedule]
int evalCommand(int argc, char **argv);

// mkc inspect MODEL.onnx|MODEL.mk [--format=text|json|dot] [--layer N] [-o FILE]
int inspectCommand(int argc, char **argv);

} // namespace mk

#endif
