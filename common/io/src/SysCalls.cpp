// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/SysCalls.h"

#include <algorithm>
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
