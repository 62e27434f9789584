// SPDX-License-Identifier: Apache-2.0
#include "CapturedFd.h"

#include <cerrno>
#include <cstring>

using namespace ompxio;

int ompxio::captureFd(offloadio::SysTy &Sys, int Fd, CapturedFdTy &Out,
                      std::string &Why) {
  int Dup = Sys.dup(Fd);
  if (Dup >= 0) {
    Out = CapturedFdTy(Dup);
    return 0;
  }
  int Errno = errno;
  Why = Errno == EBADF ? "fd " + std::to_string(Fd) + " is not open"
                       : "fcntl(fd " + std::to_string(Fd) +
                             ", F_DUPFD_CLOEXEC) to capture it for the "
                             "task: " +
                             std::strerror(Errno);
  return Errno;
}
