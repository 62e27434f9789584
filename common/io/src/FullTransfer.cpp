// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/FullTransfer.h"
#include "offloadio/io/IOCallLimit.h"
#include "offloadio/io/SysCalls.h"

#include <algorithm>
#include <cerrno>

using namespace offloadio;

FullTransferTy offloadio::preadFully(SysTy &Sys, int Fd, void *Buf,
                                     size_t Count, off_t Offset) {
  FullTransferTy T;
  char *Bytes = static_cast<char *>(Buf);
  while (T.Done < Count) {
    size_t Want = std::min(Count - T.Done, MaxIOPerCall);
    ssize_t N = Sys.pread(Fd, Bytes + T.Done, Want, Offset + off_t(T.Done));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      T.Errno = errno;
      T.Asked = Want;
      return T;
    }
    if (N == 0)
      break; // End of file.
    T.Done += size_t(N);
  }
  return T;
}

FullTransferTy offloadio::pwriteFully(SysTy &Sys, int Fd, const void *Buf,
                                      size_t Count, off_t Offset) {
  FullTransferTy T;
  const char *Bytes = static_cast<const char *>(Buf);
  while (T.Done < Count) {
    size_t Want = std::min(Count - T.Done, MaxIOPerCall);
    ssize_t N = Sys.pwrite(Fd, Bytes + T.Done, Want, Offset + off_t(T.Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      T.Errno = N < 0 ? errno : EIO;
      T.WroteNothing = N == 0;
      T.Asked = Want;
      return T;
    }
    T.Done += size_t(N);
  }
  return T;
}
