// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/Sys.h"
#include "offloadio/io/FullTransfer.h"

using namespace offloadio;

Expected<size_t> offloadio::readFully(SysTy &Sys, int Fd, char *Buf,
                                      size_t Count, off_t Offset,
                                      size_t *ReadBefore) {
  FullTransferTy T = preadFully(Sys, Fd, Buf, Count, Offset);
  if (ReadBefore)
    *ReadBefore = T.Done;
  // The buffer is formatted as a pointer: a char * would be printed as a C
  // string, read past its end.
  if (T.Errno)
    return makeErrnoError(T.Errno, "pread(fd {0}, {1}, {2} bytes, offset {3})",
                          Fd, static_cast<const void *>(Buf + T.Done),
                          T.Asked, Offset + off_t(T.Done));
  return T.Done;
}

Error offloadio::writeFully(SysTy &Sys, int Fd, const char *Buf, size_t Count,
                            off_t Offset, size_t *Written) {
  FullTransferTy T = pwriteFully(Sys, Fd, Buf, Count, Offset);
  // Whatever way the loop ended, the caller learns what reached the file.
  if (Written)
    *Written = T.Done;
  if (T.Errno)
    return makeErrnoError(T.Errno, "pwrite(fd {0}, {1}, {2} bytes, offset {3})",
                          Fd, static_cast<const void *>(Buf + T.Done),
                          T.Asked, Offset + off_t(T.Done));
  return Error::success();
}
