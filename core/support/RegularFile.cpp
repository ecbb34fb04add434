#include "core/support/RegularFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mk {

namespace {

std::string cannotOpen(const std::string &path, const std::string &what) {
  return "cannot open " + (what.empty() ? "" : what + " ") + "'" + path + "': ";
}

std::string checkKind(const std::string &path, const std::string &what) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return cannotOpen(path, what) + std::strerror(errno);
  if (!S_ISREG(status.st_mode))
    return cannotOpen(path, what) + "it is " + fileKindName(status.st_mode) +
           ", not a regular file";
  return "";
}

} // namespace

std::string fileKindName(unsigned mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

std::string checkRegularFile(const std::string &path) { return checkKind(path, ""); }

int openRegularFile(const std::string &path, const std::string &what, std::string &error) {
  error = checkKind(path, what);
  if (!error.empty())
    return -1;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = cannotOpen(path, what) + std::strerror(errno);
    return -1;
  }
  struct stat status;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    error = cannotOpen(path, what) + "it is not a regular file";
    return -1;
  }
  return fd;
}

} // namespace mk
