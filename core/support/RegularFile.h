// Opening a file a stranger named: only a regular file is read, and its kind
// is checked with stat() before open(), because opening a FIFO blocks until
// a writer comes, which may be never; O_NONBLOCK and fstat() then catch a
// file swapped in between. Every reader of outside files uses this.
#ifndef MKC_CORE_SUPPORT_REGULARFILE_H
#define MKC_CORE_SUPPORT_REGULARFILE_H

#include <string>

namespace mk {

// "a regular file", "a directory", "a FIFO", ...: what a stat() mode is.
std::string fileKindName(unsigned mode);

// "" when `path` is a regular file, else "cannot open 'PATH': why".
std::string checkRegularFile(const std::string &path);

// A read-only descriptor of the regular file `path`, or -1 with `error` set
// to "cannot open WHAT 'PATH': why" (WHAT, e.g. "model", may be empty).
int openRegularFile(const std::string &path, const std::string &what, std::string &error);

} // namespace mk

#endif
