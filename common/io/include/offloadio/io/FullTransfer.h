// SPDX-License-Identifier: Apache-2.0
//
// The one loop of pread or pwrite calls over a whole range: every device's
// file engine (readFully/writeFully of Sys.h) and libompx_io's transfers of
// the initial device (HostTransfer.cpp) move their bytes with it. Free of
// LLVM, as SysCalls.h, so that libompx_io links it without the framework;
// each caller words the failure its own way.
#ifndef OFFLOADIO_IO_FULLTRANSFER_H
#define OFFLOADIO_IO_FULLTRANSFER_H

#include <cstddef>
#include <sys/types.h>

namespace offloadio {

class SysTy;

/// How a loop over a whole range ended.
struct FullTransferTy {
  size_t Done = 0;  ///< Bytes moved, also those before a failure.
  int Errno = 0;    ///< 0, or the errno of the call that failed.
  size_t Asked = 0; ///< The count the failed call asked for.
  /// The failed call was a write that moved 0 bytes (Errno is EIO then).
  bool WroteNothing = false;
};

/// pread \p Count bytes of \p Fd at \p Offset into \p Buf: EINTR and short
/// reads retried, at most MaxIOPerCall (IOCallLimit.h) per call; ends
/// early only at end of file (Errno 0) or at the first failed call.
FullTransferTy preadFully(SysTy &Sys, int Fd, void *Buf, size_t Count,
                          off_t Offset);

/// pwrite \p Count bytes of \p Buf to \p Fd at \p Offset: EINTR and short
/// writes retried, at most MaxIOPerCall per call; ends early only at the
/// first failed call, a call that writes 0 bytes counting as failed with
/// EIO.
FullTransferTy pwriteFully(SysTy &Sys, int Fd, const void *Buf, size_t Count,
                           off_t Offset);

} // namespace offloadio

#endif // OFFLOADIO_IO_FULLTRANSFER_H
