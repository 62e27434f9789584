// SPDX-License-Identifier: Apache-2.0
//
// The syscall seam of the file engine: production code calls POSIX, tests
// substitute a SysTy that injects short reads, EINTR, EIO or ENOSPC.
#ifndef OFFLOADIO_IO_SYS_H
#define OFFLOADIO_IO_SYS_H

#include "offloadio/Error.h"

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
  /// The O_DIRECT alignment of \p Fd (statx STATX_DIOALIGN), 0 if unknown.
  virtual size_t directIOAlignment(int Fd);
};

/// Read \p Count bytes at \p Offset, retrying EINTR and short reads, with
/// no single call above 1 GiB. Returns the bytes read: fewer than \p Count
/// only at end of file. \p ReadBefore, if given, gets the bytes read, also
/// those before an error.
Expected<size_t> readFully(SysTy &Sys, int Fd, char *Buf, size_t Count,
                           off_t Offset, size_t *ReadBefore = nullptr);

/// Write all \p Count bytes at \p Offset, retrying EINTR and short writes.
/// \p Written, if given, gets the bytes written, also those before an
/// error.
Error writeFully(SysTy &Sys, int Fd, const char *Buf, size_t Count,
                 off_t Offset, size_t *Written = nullptr);

} // namespace offloadio

#endif // OFFLOADIO_IO_SYS_H
