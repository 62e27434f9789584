// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/Sys.h"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <unistd.h>

using namespace offloadio;

/// Largest single read or write: well below the kernel's 0x7ffff000 cap.
static constexpr size_t MaxIOPerCall = size_t(1) << 30;

Expected<size_t> offloadio::readFully(SysTy &Sys, int Fd, char *Buf,
                                      size_t Count, off_t Offset,
                                      size_t *ReadBefore) {
  size_t Done = 0;
  size_t Ignored;
  size_t &Out = ReadBefore ? *ReadBefore : Ignored;
  Out = 0;
  while (Done < Count) {
    size_t Want = std::min(Count - Done, MaxIOPerCall);
    ssize_t N = Sys.pread(Fd, Buf + Done, Want, Offset + off_t(Done));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      // The buffer is formatted as a pointer: a char * would be printed as
      // a C string, read past its end.
      return makeErrnoError(errno, "pread(fd {0}, {1}, {2} bytes, offset {3})",
                            Fd, static_cast<const void *>(Buf + Done), Want,
                            Offset + off_t(Done));
    }
    if (N == 0)
      break; // End of file.
    Done += size_t(N);
    Out = Done;
  }
  return Done;
}

Error offloadio::writeFully(SysTy &Sys, int Fd, const char *Buf, size_t Count,
                            off_t Offset, size_t *Written) {
  size_t Done = 0;
  // Whatever way the loop ends, the caller learns what reached the file.
  size_t Ignored;
  size_t &Out = Written ? *Written : Ignored;
  Out = 0;
  while (Done < Count) {
    size_t Want = std::min(Count - Done, MaxIOPerCall);
    ssize_t N = Sys.pwrite(Fd, Buf + Done, Want, Offset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return makeErrnoError(N < 0 ? errno : EIO,
                            "pwrite(fd {0}, {1}, {2} bytes, offset {3})", Fd,
                            static_cast<const void *>(Buf + Done), Want,
                            Offset + off_t(Done));
    Done += size_t(N);
    Out = Done;
  }
  return Error::success();
}
