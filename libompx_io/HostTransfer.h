// SPDX-License-Identifier: Apache-2.0
//
// Transfers of the initial device: host memory read or written with
// pread/pwrite by libompx_io itself, after the checks every device makes
// (offloadio/io/TransferCheck.h), so that the initial device refuses what
// the plugins' devices refuse, with the same errno.
#ifndef OMPX_IO_HOSTTRANSFER_H
#define OMPX_IO_HOSTTRANSFER_H

#include "offloadio/io/TransferCheck.h"

#include <cstddef>
#include <string>
#include <sys/types.h>

namespace ompxio {

/// How a transfer of host memory ended.
struct HostOutcomeTy {
  ssize_t Result = -1; ///< Bytes transferred, or -1.
  int Errno = 0;       ///< 0, or the errno of the failure.
  std::string Why;     ///< The failure, without the call's name.
  /// Failed before anything moved, as submission refuses a plugin's
  /// request (the checks, or the kernel's own checks of the arguments).
  bool Refused = false;
};

/// Check, then run, a read (or, with \p IsWrite, a write) of \p Count bytes
/// at \p Offset between host memory \p Buf and the descriptor \p Facts
/// describes, on initial device \p Device: the full count unless end of
/// file (for a write, the file size limit) comes first, with the file
/// engine's loop (offloadio/io/FullTransfer.h).
HostOutcomeTy runHostTransfer(offloadio::SysTy &Sys,
                              const offloadio::DescriptorFactsTy &Facts,
                              bool IsWrite, void *Buf, size_t Count,
                              off_t Offset, int Device);

} // namespace ompxio

#endif // OMPX_IO_HOSTTRANSFER_H
