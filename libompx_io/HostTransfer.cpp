// SPDX-License-Identifier: Apache-2.0
#include "HostTransfer.h"
#include "offloadio/io/FullTransfer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace ompxio;
using namespace offloadio;

HostOutcomeTy ompxio::runHostTransfer(SysTy &Sys,
                                      const DescriptorFactsTy &Facts,
                                      bool IsWrite, void *Buf, size_t Count,
                                      off_t Offset, int Device) {
  HostOutcomeTy Out;
  if (TransferVerdictTy V = checkTransfer(
          Sys, Facts, IsWrite, Count, Offset, Device,
          [&] { return checkHostBuffer(IsWrite, Buf, Count, Device); })) {
    Out.Errno = V.Errno;
    Out.Why = std::move(V.Why);
    Out.Refused = true;
    return Out;
  }
  int Fd = Facts.Fd;
  // The engine's loop (FullTransfer.h): the same calls, at most
  // MaxIOPerCall bytes each, as every other device's file engine makes.
  FullTransferTy T = IsWrite ? pwriteFully(Sys, Fd, Buf, Count, Offset)
                             : preadFully(Sys, Fd, Buf, Count, Offset);
  // At the file size limit a write returns what it wrote before it, as
  // pwrite(2) does; EFBIG only if that is nothing.
  if (T.Errno && !(T.Errno == EFBIG && T.Done)) {
    Out.Errno = T.Errno;
    char Text[160];
    std::snprintf(Text, sizeof(Text), "%s(fd %d, %p, %zu bytes, offset %lld)",
                  IsWrite ? "pwrite" : "pread", Fd,
                  static_cast<void *>(static_cast<char *>(Buf) + T.Done),
                  T.Asked, (long long)(Offset + off_t(T.Done)));
    Out.Why = std::string(Text) + ": " +
              (T.WroteNothing ? "wrote 0 bytes" : std::strerror(Out.Errno));
    // The kernel's checks of the arguments, before anything moved.
    Out.Refused = !T.Done && (Out.Errno == EFAULT || Out.Errno == EINVAL);
    return Out;
  }
  Out.Result = ssize_t(T.Done);
  return Out;
}
