// SPDX-License-Identifier: Apache-2.0
#include "HostTransfer.h"

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
  size_t Done = 0;
  while (Done < Count) {
    // The whole rest in every call: the kernel caps what one call moves,
    // and checks the whole range first, as it would for the program's own
    // pread.
    char *P = static_cast<char *>(Buf) + Done;
    ssize_t N = IsWrite ? Sys.pwrite(Fd, P, Count - Done, Offset + off_t(Done))
                        : Sys.pread(Fd, P, Count - Done, Offset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    // At the file size limit a write returns what it wrote before it, as
    // pwrite(2) does; EFBIG only if that is nothing.
    if (N < 0 && errno == EFBIG && Done)
      break;
    if (N <= 0 && (N < 0 || IsWrite)) {
      Out.Errno = N < 0 ? errno : EIO;
      char Text[160];
      std::snprintf(Text, sizeof(Text), "%s(fd %d, %p, %zu bytes, offset %lld)",
                    IsWrite ? "pwrite" : "pread", Fd, static_cast<void *>(P),
                    Count - Done, (long long)(Offset + off_t(Done)));
      Out.Why = std::string(Text) + ": " +
                (N < 0 ? std::strerror(Out.Errno) : "wrote 0 bytes");
      // The kernel's checks of the arguments, before anything moved.
      Out.Refused = !Done && (Out.Errno == EFAULT || Out.Errno == EINVAL);
      return Out;
    }
    if (N == 0)
      break; // End of file.
    Done += size_t(N);
  }
  Out.Result = ssize_t(Done);
  return Out;
}
