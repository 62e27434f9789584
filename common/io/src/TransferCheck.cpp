// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/TransferCheck.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>

using namespace offloadio;

namespace {

/// The zero-length pread or pwrite of \p Fd at \p Offset: 0, or -1 with the
/// errno Linux gives.
ssize_t zeroLengthCall(SysTy &Sys, bool IsWrite, int Fd, off_t Offset) {
  static char Dummy;
  ssize_t N;
  do
    N = IsWrite ? Sys.pwrite(Fd, &Dummy, 0, Offset)
                : Sys.pread(Fd, &Dummy, 0, Offset);
  while (N < 0 && errno == EINTR);
  return N;
}

/// "read on device 3: " + \p What.
TransferVerdictTy refuse(int Errno, bool IsWrite, int DeviceId,
                         const std::string &What) {
  return {Errno, std::string(IsWrite ? "write" : "read") + " on device " +
                     std::to_string(DeviceId) + ": " + What};
}

} // namespace

DescriptorFactsTy offloadio::inspectDescriptor(SysTy &Sys, int Fd) {
  DescriptorFactsTy F;
  F.Fd = Fd;
  F.Flags = Sys.getFlags(Fd);
  // An O_PATH descriptor is open, but not for I/O: Linux's fdget() does not
  // see it, so nothing more is asked of it.
  if (F.Flags < 0 || (F.Flags & O_PATH))
    return F;
  if (Sys.fstat(Fd, &F.St) < 0) {
    F.StatErrno = errno;
    return F;
  }
  mode_t Mode = F.St.st_mode;
  // Which files have positional I/O only the kernel knows (a tty, an
  // eventfd have none): it answers ESPIPE before looking at the access
  // mode or the count, so a zero-length pread asks it without effect.
  if (!S_ISREG(Mode) && !S_ISBLK(Mode) && !S_ISDIR(Mode) && !S_ISFIFO(Mode) &&
      !S_ISSOCK(Mode) && zeroLengthCall(Sys, false, Fd, 0) < 0)
    F.ProbeErrno = errno;
  return F;
}

TransferVerdictTy offloadio::checkDescriptorUse(const DescriptorFactsTy &F,
                                                bool IsWrite, off_t Offset,
                                                int DeviceId) {
  const char *Call = IsWrite ? "pwrite" : "pread";
  if (Offset < 0)
    return refuse(EINVAL, IsWrite, DeviceId,
                  "negative offset " + std::to_string(int64_t(Offset)));
  std::string Fd = "fd " + std::to_string(F.Fd);
  if (F.Flags < 0 || (F.Flags & O_PATH))
    return refuse(EBADF, IsWrite, DeviceId,
                  Fd + " is not open" + (F.Flags < 0 ? "" : " for I/O (O_PATH)"));
  if (F.StatErrno)
    return refuse(F.StatErrno, IsWrite, DeviceId,
                  "fstat(" + Fd + ") failed: " + std::strerror(F.StatErrno));
  mode_t Mode = F.St.st_mode;
  // Seekability comes before the access mode: the write end of a pipe read
  // is ESPIPE, not EBADF.
  if (S_ISFIFO(Mode) || S_ISSOCK(Mode))
    return refuse(ESPIPE, IsWrite, DeviceId,
                  Fd + " is a " + (S_ISFIFO(Mode) ? "pipe or FIFO" : "socket") +
                      ", which has no file offset (" + Call +
                      " fails with ESPIPE)");
  if (F.ProbeErrno == ESPIPE)
    return refuse(ESPIPE, IsWrite, DeviceId,
                  Fd + " has no file offset (" + Call + " fails with ESPIPE)");
  int AccessMode = F.Flags & O_ACCMODE;
  if ((!IsWrite && AccessMode == O_WRONLY) ||
      (IsWrite && AccessMode == O_RDONLY))
    return refuse(EBADF, IsWrite, DeviceId,
                  Fd + " is not open for " +
                      (IsWrite ? "writing" : "reading"));
  return {};
}

TransferVerdictTy offloadio::checkTransferRange(SysTy &Sys,
                                                const DescriptorFactsTy &F,
                                                bool IsWrite, size_t Count,
                                                off_t Offset, int DeviceId) {
  if (Count > size_t(SSIZE_MAX) ||
      uint64_t(Offset) + Count > uint64_t(INT64_MAX))
    return refuse(EINVAL, IsWrite, DeviceId,
                  std::to_string(Count) + " bytes at offset " +
                      std::to_string(int64_t(Offset)) +
                      " overflow the file offset range");
  mode_t Mode = F.St.st_mode;
  if (!IsWrite && S_ISDIR(Mode))
    return refuse(EISDIR, IsWrite, DeviceId,
                  "fd " + std::to_string(F.Fd) + " is a directory");
  // Count 0 on another kind of file: the kernel's checks of the descriptor
  // decide. What a driver says of zero bytes (/dev/full: ENOSPC) does not:
  // count 0 moves nothing, so nothing fails.
  if (Count == 0 && !S_ISREG(Mode) && !S_ISBLK(Mode) &&
      zeroLengthCall(Sys, IsWrite, F.Fd, Offset) < 0 &&
      (errno == ESPIPE || errno == EBADF || errno == EINVAL || errno == EISDIR)) {
    int Errno = errno;
    return refuse(Errno, IsWrite, DeviceId,
                  std::string(IsWrite ? "pwrite" : "pread") + "(fd " +
                      std::to_string(F.Fd) + ", 0 bytes, offset " +
                      std::to_string(int64_t(Offset)) + ") failed: " +
                      std::strerror(Errno));
  }
  return {};
}

TransferVerdictTy offloadio::checkHostBuffer(bool IsWrite, const void *Buf,
                                             size_t Count, int DeviceId) {
  if (!Count)
    return {};
  if (!Buf)
    return refuse(EFAULT, IsWrite, DeviceId,
                  std::to_string(Count) + " bytes at a null buffer");
  if (Count > size_t(SSIZE_MAX) || uintptr_t(Buf) + Count < uintptr_t(Buf)) {
    char Where[32];
    std::snprintf(Where, sizeof(Where), "%p", Buf);
    return refuse(EFAULT, IsWrite, DeviceId,
                  std::to_string(Count) + " bytes at " + Where +
                      " run past the end of the address space");
  }
  return {};
}
