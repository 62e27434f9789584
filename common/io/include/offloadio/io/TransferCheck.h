// SPDX-License-Identifier: Apache-2.0
//
// The checks of one file transfer before it starts, shared by every device
// (the plugins' engines) and by the initial device (libompx_io, which serves
// host memory itself), so that no device can answer a bad call differently
// from another. One order, Linux's for pread(2) and pwrite(2):
//   1. a negative offset: EINVAL;
//   2. a descriptor that is not open, or an O_PATH one: EBADF;
//   3. a file without positional I/O (pipes, FIFOs, sockets, ttys, eventfds
//      and other files the kernel answers ESPIPE for): ESPIPE;
//   4. the wrong access mode: EBADF;
//   5. the buffer, as the caller's device sees it: EFAULT;
//   6. offset + count beyond the file offset range: EINVAL;
//   7. a read of a directory: EISDIR;
//   8. count 0 on a file that is neither regular nor a block device: what a
//      zero-length system call says of the descriptor, where it is one of
//      the errors above or EINVAL.
// Step 5 is the only one that differs by device, so it is the caller's, run
// in its place by checkTransfer. What a descriptor is, is asked of the
// kernel once (inspectDescriptor): a batch that names one descriptor many
// times pays for it once.
//
// Free of LLVM: libompx_io links nothing of the framework but this and the
// SysTy seam it calls through (SysCalls.h).
#ifndef OFFLOADIO_IO_TRANSFERCHECK_H
#define OFFLOADIO_IO_TRANSFERCHECK_H

#include "offloadio/io/SysCalls.h"

#include <cstddef>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace offloadio {

/// What the checks need to know of a descriptor.
struct DescriptorFactsTy {
  int Fd = -1;
  int Flags = -1;    ///< fcntl(F_GETFL); -1 when the descriptor is not open.
  int StatErrno = 0; ///< fstat's errno; 0 when St is valid.
  struct stat St = {};
  /// For files that are not regular files, block devices, directories,
  /// FIFOs or sockets: the errno of a zero-length pread (ESPIPE: no
  /// positional I/O). 0 otherwise.
  int ProbeErrno = 0;
};

/// Ask the kernel what \p Fd is, through \p Sys.
DescriptorFactsTy inspectDescriptor(SysTy &Sys, int Fd);

/// The answer of a check: Errno 0 when the transfer may go on; otherwise
/// the errno and why, as "read on device 1: fd 5 is not open".
struct TransferVerdictTy {
  int Errno = 0;
  std::string Why;

  explicit operator bool() const { return Errno != 0; }
};

/// Steps 1 to 4 for a read (or, with \p IsWrite, a write) at \p Offset on
/// device \p DeviceId.
TransferVerdictTy checkDescriptorUse(const DescriptorFactsTy &Facts,
                                     bool IsWrite, off_t Offset,
                                     int DeviceId);

/// Steps 6 to 8 for \p Count bytes at \p Offset.
TransferVerdictTy checkTransferRange(SysTy &Sys, const DescriptorFactsTy &Facts,
                                     bool IsWrite, size_t Count, off_t Offset,
                                     int DeviceId);

/// Step 5 for host memory (the initial device, or a device whose memory is
/// the host's): EFAULT when \p Count is not 0 and \p Buf is NULL, or when
/// no address space holds \p Count bytes from \p Buf (Count > SSIZE_MAX, or
/// the range wraps), where Linux's pread(2) fails with EFAULT too.
TransferVerdictTy checkHostBuffer(bool IsWrite, const void *Buf, size_t Count,
                                  int DeviceId);

/// Every check, in order: \p BufferCheck() is step 5 and returns a
/// TransferVerdictTy. The first that fails answers.
template <typename BufferCheckFnTy>
TransferVerdictTy checkTransfer(SysTy &Sys, const DescriptorFactsTy &Facts,
                                bool IsWrite, size_t Count, off_t Offset,
                                int DeviceId, BufferCheckFnTy &&BufferCheck) {
  if (TransferVerdictTy V = checkDescriptorUse(Facts, IsWrite, Offset,
                                               DeviceId))
    return V;
  if (TransferVerdictTy V = BufferCheck())
    return V;
  return checkTransferRange(Sys, Facts, IsWrite, Count, Offset, DeviceId);
}

} // namespace offloadio

#endif // OFFLOADIO_IO_TRANSFERCHECK_H
