// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/Sys.h"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <unistd.h>

using namespace offloadio;

SysTy::~SysTy() = default;

ssize_t SysTy::pread(int Fd, void *Buf, size_t Count, off_t Offset) {
  return ::pread(Fd, Buf, Count, Offset);
}

ssize_t SysTy::pwrite(int Fd, const void *Buf, size_t Count, off_t Offset) {
  return ::pwrite(Fd, Buf, Count, Offset);
}

ssize_t SysTy::preadv(int Fd, const struct iovec *Iov, int IovCount,
                      off_t Offset) {
  return ::preadv(Fd, Iov, IovCount, Offset);
}

ssize_t SysTy::pwritev(int Fd, const struct iovec *Iov, int IovCount,
                       off_t Offset) {
  return ::pwritev(Fd, Iov, IovCount, Offset);
}

int SysTy::getFlags(int Fd) { return ::fcntl(Fd, F_GETFL); }

int SysTy::dup(int Fd) { return ::fcntl(Fd, F_DUPFD_CLOEXEC, 0); }

int SysTy::close(int Fd) { return ::close(Fd); }

int SysTy::reopen(int Fd, int Flags) {
  std::string Path = "/proc/self/fd/" + std::to_string(Fd);
  return ::open(Path.c_str(), Flags | O_CLOEXEC);
}

int SysTy::fstat(int Fd, struct stat *St) { return ::fstat(Fd, St); }

size_t SysTy::directIOAlignment(int Fd) {
#ifdef STATX_DIOALIGN
  struct statx Stx;
  if (::statx(Fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &Stx) == 0 &&
      (Stx.stx_mask & STATX_DIOALIGN) && Stx.stx_dio_offset_align)
    return std::max<size_t>(Stx.stx_dio_offset_align, Stx.stx_dio_mem_align);
#endif
  // Without STATX_DIOALIGN (older kernels and headers) the logical block
  // size of common devices is the safe guess.
  return 4096;
}

/// Largest single read or write: well below the kernel's 0x7ffff000 cap.
static constexpr size_t MaxIOPerCall = size_t(1) << 30;

Expected<size_t> offloadio::readFully(SysTy &Sys, int Fd, char *Buf,
                                      size_t Count, off_t Offset,
                                      size_t *ReadBefore) {
  size_t Done = 0;
  size_t Ignored;
  size_t &Out = ReadBefore ? *ReadBefore : Ignored;
  Out = 0;
  while (Done < Count) {
    size_t Want = std::min(Count - Done, MaxIOPerCall);
    ssize_t N = Sys.pread(Fd, Buf + Done, Want, Offset + off_t(Done));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      // The buffer is formatted as a pointer: a char * would be printed as
      // a C string, read past its end.
      return makeErrnoError(errno, "pread(fd {0}, {1}, {2} bytes, offset {3})",
                            Fd, static_cast<const void *>(Buf + Done), Want,
                            Offset + off_t(Done));
    }
    if (N == 0)
      break; // End of file.
    Done += size_t(N);
    Out = Done;
  }
  return Done;
}

Error offloadio::writeFully(SysTy &Sys, int Fd, const char *Buf, size_t Count,
                            off_t Offset, size_t *Written) {
  size_t Done = 0;
  // Whatever way the loop ends, the caller learns what reached the file.
  size_t Ignored;
  size_t &Out = Written ? *Written : Ignored;
  Out = 0;
  while (Done < Count) {
    size_t Want = std::min(Count - Done, MaxIOPerCall);
    ssize_t N = Sys.pwrite(Fd, Buf + Done, Want, Offset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return makeErrnoError(N < 0 ? errno : EIO,
                            "pwrite(fd {0}, {1}, {2} bytes, offset {3})", Fd,
                            static_cast<const void *>(Buf + Done), Want,
                            Offset + off_t(Done));
    Done += size_t(N);
    Out = Done;
  }
  return Error::success();
}
