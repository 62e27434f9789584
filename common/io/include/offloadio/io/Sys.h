// SPDX-License-Identifier: Apache-2.0
//
// The file engine's loops over the syscall seam (SysCalls.h): whole reads
// and writes, retried on EINTR and short transfers (FullTransfer.h), their
// failures as llvm::Error.
#ifndef OFFLOADIO_IO_SYS_H
#define OFFLOADIO_IO_SYS_H

#include "offloadio/Error.h"
#include "offloadio/io/SysCalls.h"

#include <sys/types.h>

namespace offloadio {

/// Read \p Count bytes at \p Offset, retrying EINTR and short reads, with
/// no single call above MaxIOPerCall (IOCallLimit.h). Returns the bytes
/// read: fewer than \p Count only at end of file. \p ReadBefore, if given,
/// gets the bytes read, also those before an error.
Expected<size_t> readFully(SysTy &Sys, int Fd, char *Buf, size_t Count,
                           off_t Offset, size_t *ReadBefore = nullptr);

/// Write all \p Count bytes at \p Offset, retrying EINTR and short writes.
/// \p Written, if given, gets the bytes written, also those before an
/// error.
Error writeFully(SysTy &Sys, int Fd, const char *Buf, size_t Count,
                 off_t Offset, size_t *Written = nullptr);

} // namespace offloadio

#endif // OFFLOADIO_IO_SYS_H
