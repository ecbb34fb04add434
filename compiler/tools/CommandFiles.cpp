#include "compiler/tools/CommandFiles.h"

#include "runtime/format/MkFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mk {

namespace {

std::string cannotWrite(const std::string &path, const std::string &reason) {
  return "cannot write '" + (path == "-" ? std::string("<stdout>") : path) + "': " + reason;
}

// All of `bytes`, through short writes and signals.
bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

} // namespace

std::string checkInputFile(const std::string &path) { return checkRegularFile(path); }

std::string checkOutput(const std::string &output, const std::vector<std::string> &inputs) {
  return output == "-" ? "" : checkOutputFile(output, inputs);
}

std::string writeOutputFile(const std::string &path, std::string_view bytes) {
  if (path == "-") {
    if (!writeAll(STDOUT_FILENO, bytes))
      return cannotWrite(path, std::strerror(errno));
    return "";
  }
  if (std::string refused = checkOutputFile(path, {}); !refused.empty())
    return refused;
  // O_NONBLOCK so that a FIFO nobody reads fails (ENXIO) instead of
  // blocking; cleared once open, so that writes wait for a slow reader.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0666);
  if (fd < 0)
    return cannotWrite(path, errno == ENXIO ? "no process is reading it" : std::strerror(errno));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  struct stat status;
  bool regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
  bool written = writeAll(fd, bytes);
  int writeErrno = errno;
  // close() reports what a network or full file system held back.
  bool closed = ::close(fd) == 0;
  if (written && closed)
    return "";
  if (regular)
    ::unlink(path.c_str()); // a partial output is worse than none
  return cannotWrite(path, std::strerror(written ? errno : writeErrno));
}

} // namespace mk
