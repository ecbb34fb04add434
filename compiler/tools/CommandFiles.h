// The files mkc's commands read and write, checked the same way by every
// command: an input must be a regular file (opening a FIFO would block, a
// directory is not a model), an output must not be an input and is written
// only once complete, and a failed write is an error naming the path
// (exit 2), never LLVM's "IO failure" abort.
#ifndef MKC_COMPILER_TOOLS_COMMANDFILES_H
#define MKC_COMPILER_TOOLS_COMMANDFILES_H

#include <string>
#include <string_view>
#include <vector>

namespace mk {

// "" when `path` is a regular file, else why not (runtime/format/MkFile.h's
// checkRegularFile).
std::string checkInputFile(const std::string &path);

// "" when `output` ("-": stdout) may be written by a command reading
// `inputs`, else why not (MkFile.h's checkOutputFile).
std::string checkOutput(const std::string &output, const std::vector<std::string> &inputs);

// Writes `bytes` to `path` ("-": stdout) in place: a regular file (created
// or truncated, removed again when the write fails), a FIFO that a process
// reads, or a character device. "" or "cannot write 'PATH': reason".
std::string writeOutputFile(const std::string &path, std::string_view bytes);

} // namespace mk

#endif
