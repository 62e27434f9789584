// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IODescriptor.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

using namespace offloadio;

bool offloadio::canReopen(SysTy &Sys, int Fd, std::string &Why) {
  struct stat St;
  if (Sys.fstat(Fd, &St) < 0) {
    Why = std::string("fstat failed: ") + std::strerror(errno);
    return false;
  }
  if (S_ISREG(St.st_mode) || S_ISBLK(St.st_mode))
    return true;
  Why = S_ISFIFO(St.st_mode)  ? "a pipe or FIFO"
        : S_ISSOCK(St.st_mode) ? "a socket"
        : S_ISCHR(St.st_mode)  ? "a character device"
        : S_ISDIR(St.st_mode)  ? "a directory"
                               : "not a regular file";
  return false;
}
