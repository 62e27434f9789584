// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IODescriptor.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

using namespace offloadio;

/// The zero-length pread or pwrite of \p Fd at \p Offset: 0, or -1 with the
/// errno Linux gives.
static ssize_t zeroLengthCall(SysTy &Sys, bool IsWrite, int Fd,
                              off_t Offset) {
  static char Dummy;
  ssize_t N;
  do
    N = IsWrite ? Sys.pwrite(Fd, &Dummy, 0, Offset)
                : Sys.pread(Fd, &Dummy, 0, Offset);
  while (N < 0 && errno == EINTR);
  return N;
}

Expected<int> offloadio::checkDescriptor(SysTy &Sys, bool IsWrite, int Fd,
                                         size_t Count, off_t Offset,
                                         int DeviceId) {
  const char *OpName = IsWrite ? "write" : "read";
  const char *Call = IsWrite ? "pwrite" : "pread";
  if (Offset < 0)
    return makeErrnoError(EINVAL, "{0} on device {1}: negative offset {2}",
                          OpName, DeviceId, int64_t(Offset));
  int Flags = Sys.getFlags(Fd);
  // An O_PATH descriptor is open, but not for I/O: Linux's fdget() does not
  // see it.
  if (Flags < 0 || (Flags & O_PATH))
    return makeErrnoError(EBADF, "{0} on device {1}: fd {2} is not open{3}",
                          OpName, DeviceId, Fd,
                          Flags < 0 ? "" : " for I/O (O_PATH)");
  struct stat St;
  if (Sys.fstat(Fd, &St) < 0)
    return makeErrnoError(errno, "fstat(fd {0}) for a {1} on device {2}", Fd,
                          OpName, DeviceId);
  // Seekability comes before the access mode: the write end of a pipe read
  // is ESPIPE, not EBADF. FIFOs and sockets never have positional I/O.
  if (S_ISFIFO(St.st_mode) || S_ISSOCK(St.st_mode))
    return makeErrnoError(ESPIPE, "{0} on device {1}: fd {2} is a {3}, which "
                          "has no file offset ({4} fails with ESPIPE)",
                          OpName, DeviceId, Fd,
                          S_ISFIFO(St.st_mode) ? "pipe or FIFO" : "socket",
                          Call);
  int Mode = Flags & O_ACCMODE;
  if ((!IsWrite && Mode == O_WRONLY) || (IsWrite && Mode == O_RDONLY)) {
    // A character device may lack positional I/O too (a tty): only the
    // kernel knows, and it answers ESPIPE before EBADF.
    if (S_ISCHR(St.st_mode) && zeroLengthCall(Sys, IsWrite, Fd, Offset) < 0 &&
        errno == ESPIPE)
      return makeErrnoError(ESPIPE, "{0} on device {1}: fd {2} has no file "
                            "offset ({3} fails with ESPIPE)",
                            OpName, DeviceId, Fd, Call);
    return makeErrnoError(EBADF, "{0} on device {1}: fd {2} is not open for "
                          "{3}",
                          OpName, DeviceId, Fd, IsWrite ? "writing" : "reading");
  }
  if (Count > size_t(SSIZE_MAX) ||
      uint64_t(Offset) + Count > uint64_t(INT64_MAX))
    return makeErrnoError(EINVAL, "{0} on device {1}: {2} bytes at offset {3} "
                          "overflow the file offset range",
                          OpName, DeviceId, Count, int64_t(Offset));
  if (!IsWrite && S_ISDIR(St.st_mode))
    return makeErrnoError(EISDIR, "read on device {0}: fd {1} is a directory",
                          DeviceId, Fd);
  // Count 0 on another kind of file (a tty): the kernel's checks of the
  // descriptor decide. What a driver says of zero bytes (/dev/full:
  // ENOSPC) does not: count 0 moves nothing, so nothing fails.
  if (Count == 0 && !S_ISREG(St.st_mode) && !S_ISBLK(St.st_mode) &&
      zeroLengthCall(Sys, IsWrite, Fd, Offset) < 0 &&
      (errno == ESPIPE || errno == EBADF || errno == EINVAL || errno == EISDIR))
    return makeErrnoError(errno, "{0}(fd {1}, 0 bytes, offset {2}) on device "
                          "{3}",
                          Call, Fd, int64_t(Offset), DeviceId);
  return Flags;
}

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
