// SPDX-License-Identifier: Apache-2.0
//
// The caller's descriptor, checked as Linux's pread(2) and pwrite(2) check
// it, in the kernel's order: a negative offset (EINVAL), a descriptor that
// is not open or is an O_PATH one (EBADF), a file without positional I/O
// (ESPIPE: FIFOs, sockets, ttys), the wrong access mode (EBADF), a read of a
// directory (EISDIR), then the count; count 0 is no exception. Where only
// the kernel knows (a tty has no file offset), a zero-length system call
// asks it. And which files may be reopened through /proc/self/fd.
#ifndef OFFLOADIO_IO_IODESCRIPTOR_H
#define OFFLOADIO_IO_IODESCRIPTOR_H

#include "offloadio/Error.h"
#include "offloadio/io/Sys.h"

#include <string>

namespace offloadio {

/// Check descriptor \p Fd for a read (or, with \p IsWrite, a write) of
/// \p Count bytes at \p Offset on device \p DeviceId. Returns the
/// descriptor's status flags (fcntl F_GETFL), or the error pread(2) or
/// pwrite(2) would report first.
Expected<int> checkDescriptor(SysTy &Sys, bool IsWrite, int Fd, size_t Count,
                              off_t Offset, int DeviceId);

/// Whether the file of \p Fd may be reopened through /proc/self/fd: regular
/// files and block devices only. Opening a FIFO blocks until a peer comes,
/// a tty may become the controlling terminal, a socket cannot be opened. On
/// false, \p Why says why not.
bool canReopen(SysTy &Sys, int Fd, std::string &Why);

} // namespace offloadio

#endif // OFFLOADIO_IO_IODESCRIPTOR_H
