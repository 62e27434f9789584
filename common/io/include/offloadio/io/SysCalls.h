// SPDX-License-Identifier: Apache-2.0
//
// The syscall seam of the file engine and of libompx_io: production code
// calls POSIX, tests substitute a SysTy that injects short reads, EINTR,
// EIO or ENOSPC. Free of LLVM, so that libompx_io, which links nothing of
// the framework, shares it (and the checks of TransferCheck.h).
#ifndef OFFLOADIO_IO_SYSCALLS_H
#define OFFLOADIO_IO_SYSCALLS_H

#include <cstddef>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

namespace offloadio {

/// The system calls the file engine makes. Each returns what POSIX returns
/// and leaves errno set on failure.
class SysTy {
public:
  virtual ~SysTy();
  /// pread(2).
  virtual ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset);
  /// pwrite(2).
  virtual ssize_t pwrite(int Fd, const void *Buf, size_t Count, off_t Offset);
  /// preadv(2).
  virtual ssize_t preadv(int Fd, const struct iovec *Iov, int IovCount,
                         off_t Offset);
  /// pwritev(2).
  virtual ssize_t pwritev(int Fd, const struct iovec *Iov, int IovCount,
                          off_t Offset);
  /// fcntl(Fd, F_GETFL).
  virtual int getFlags(int Fd);
  /// fcntl(Fd, F_DUPFD_CLOEXEC, 0).
  virtual int dup(int Fd);
  /// close(2).
  virtual int close(int Fd);
  /// open("/proc/self/fd/<Fd>", Flags): a second open file description.
  virtual int reopen(int Fd, int Flags);
  /// fstat(2).
  virtual int fstat(int Fd, struct stat *St);
  /// The O_DIRECT alignment of \p Fd: the larger of the offset and memory
  /// alignments statx reports (STATX_DIOALIGN), or 4096, the logical block
  /// size of common devices, when it reports none. Substitutes may return
  /// 0; callers then take 4096.
  virtual size_t directIOAlignment(int Fd);
};

} // namespace offloadio

#endif // OFFLOADIO_IO_SYSCALLS_H
