// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOChunkIO.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/Sys.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <sys/stat.h>
#include <sys/uio.h>
#include <vector>

using namespace offloadio;

namespace {

/// Read with O_DIRECT. A short count that leaves the offset unaligned is the
/// end of file; whatever is left, and all of a chunk that O_DIRECT refuses
/// with EINVAL, is read buffered. \p Before gets the bytes read, also those
/// before an error.
Expected<size_t> readODirect(SysTy &Sys, IORequestTy &R, char *Buf, size_t Len,
                             off_t FileOffset, size_t &Before) {
  size_t Done = 0;
  Before = 0;
  while (Done < Len) {
    ssize_t N = Sys.pread(R.directFd(), Buf + Done, Len - Done,
                          FileOffset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 && errno != EINVAL)
      return makeErrnoError(errno, "pread(fd {0}, {1}, {2} bytes, offset {3})",
                            R.directFd(), static_cast<const void *>(Buf + Done),
                            Len - Done, FileOffset + off_t(Done));
    if (N == 0)
      return Done; // End of file.
    if (N > 0)
      Before = Done += size_t(N);
    if (N < 0 || Done % R.directAlign()) {
      size_t RestBefore = 0;
      auto Rest = readFully(Sys, R.bufferedFd(), Buf + Done, Len - Done,
                            FileOffset + off_t(Done), &RestBefore);
      Before = Done + RestBefore;
      if (!Rest)
        return Rest.takeError();
      return Done + *Rest;
    }
  }
  return Done;
}

/// How far O_DIRECT reads of \p Fd may go without meeting the end of file:
/// a regular file's size. Other files (block devices) end an O_DIRECT read
/// at their end without writing past it: no limit. A failed fstat gives 0,
/// so that the read goes buffered: pread works whatever fstat says.
uint64_t directReadLimit(SysTy &Sys, int Fd) {
  struct stat St;
  if (Sys.fstat(Fd, &St) != 0)
    return 0;
  return S_ISREG(St.st_mode) ? uint64_t(St.st_size) : UINT64_MAX;
}

/// Write with O_DIRECT; what O_DIRECT refuses with EINVAL, or leaves
/// unaligned, is written buffered. \p Done gets the bytes written, also
/// those before an error.
Error writeODirect(SysTy &Sys, IORequestTy &R, const char *Buf, size_t Len,
                   off_t FileOffset, size_t &Done) {
  Done = 0;
  while (Done < Len) {
    ssize_t N = Sys.pwrite(R.directFd(), Buf + Done, Len - Done,
                           FileOffset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N == 0 || (N < 0 && errno != EINVAL))
      return makeErrnoError(N < 0 ? errno : EIO,
                            "pwrite(fd {0}, {1}, {2} bytes, offset {3})",
                            R.directFd(), static_cast<const void *>(Buf + Done),
                            Len - Done, FileOffset + off_t(Done));
    if (N > 0)
      Done += size_t(N);
    if (N < 0 || Done % R.directAlign()) {
      size_t Rest = 0;
      Error Err = writeFully(Sys, R.bufferedFd(), Buf + Done, Len - Done,
                             FileOffset + off_t(Done), &Rest);
      Done += Rest;
      return Err;
    }
  }
  return Error::success();
}

} // namespace

Expected<size_t> offloadio::readChunk(SysTy &Sys, IORequestTy &R, size_t Index,
                                      char *Buf, size_t Len, off_t FileOffset,
                                      size_t *ReadBefore) {
  size_t Ignored;
  size_t &Before = ReadBefore ? *ReadBefore : Ignored;
  if (R.useDirectFd(Index, Buf))
    return readODirect(Sys, R, Buf, Len, FileOffset, Before);
  return readFully(Sys, R.bufferedFd(), Buf, Len, FileOffset, &Before);
}

Expected<size_t> offloadio::readChunkInPlace(SysTy &Sys, IORequestTy &R,
                                             size_t Index, char *Buf,
                                             size_t Len, off_t FileOffset) {
  if (!R.useDirectFd(Index, Buf))
    return readFully(Sys, R.bufferedFd(), Buf, Len, FileOffset);
  uint64_t Begin = uint64_t(FileOffset);
  uint64_t Limit = R.knownFileEnd();
  if (Limit < Begin + Len) {
    // The file may have grown since the size was seen: look again, only
    // for chunks that reach past it.
    Limit = directReadLimit(Sys, R.directFd());
    R.noteFileEnd(Limit);
  }
  size_t Align = R.directAlign();
  size_t ODirectLen =
      Limit > Begin
          ? size_t(std::min<uint64_t>(Len, (Limit - Begin) / Align * Align))
          : 0;
  size_t Done = 0;
  if (ODirectLen) {
    size_t Before = 0;
    auto N = readODirect(Sys, R, Buf, ODirectLen, FileOffset, Before);
    if (!N || *N < ODirectLen)
      return N; // An error, or the file ended sooner than it was seen to.
    Done = *N;
  }
  if (Done == Len)
    return Done;
  auto Rest = readFully(Sys, R.bufferedFd(), Buf + Done, Len - Done,
                        FileOffset + off_t(Done));
  if (!Rest)
    return Rest.takeError();
  return Done + *Rest;
}

Error offloadio::writeChunkPart(SysTy &Sys, IORequestTy &R, size_t Index,
                                const char *Buf, size_t Len, off_t FileOffset,
                                size_t &Written) {
  if (R.useDirectFd(Index, Buf))
    return writeODirect(Sys, R, Buf, Len, FileOffset, Written);
  return writeFully(Sys, R.bufferedFd(), Buf, Len, FileOffset, &Written);
}

size_t offloadio::writeChunk(SysTy &Sys, IORequestTy &R, size_t Index,
                             const char *Buf, size_t Len, off_t FileOffset) {
  size_t Written = 0;
  Error Err = writeChunkPart(Sys, R, Index, Buf, Len, FileOffset, Written);
  if (!Err) {
    R.recordChunk(Index, Len);
    return Len;
  }
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  if (D.Errno == EFBIG)
    R.recordChunk(Index, Written);
  else
    Written = 0;
  R.recordError(Index, makeErrnoError(D.Errno, "{0}", D.Message));
  return Written;
}

size_t offloadio::moveGathered(SysTy &Sys, IORequestTy &R) {
  const char *Call = R.isWrite() ? "pwritev" : "preadv";
  std::vector<struct iovec> Iov;
  Iov.reserve(R.segments().size());
  for (const IOSegmentTy &S : R.segments())
    Iov.push_back({S.DevPtr, S.Len});
  size_t Done = 0, First = 0, Len = R.count();
  while (Done < Len) {
    off_t At = R.offset() + off_t(Done);
    int Count = int(Iov.size() - First);
    ssize_t N = R.isWrite() ? Sys.pwritev(R.bufferedFd(), &Iov[First], Count, At)
                            : Sys.preadv(R.bufferedFd(), &Iov[First], Count, At);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0 || (N == 0 && R.isWrite())) {
      R.recordChunk(0, Done);
      R.recordError(0,
                    makeErrnoError(N < 0 ? errno : EIO,
                                   "{0}(fd {1}, {2} buffers from {3}, {4} "
                                   "bytes, offset {5})",
                                   Call, R.bufferedFd(), Count,
                                   Iov[First].iov_base, Len - Done,
                                   int64_t(At)),
                    Done);
      return Done;
    }
    if (N == 0)
      break; // End of file.
    Done += size_t(N);
    // Step over what moved: whole buffers, then into the next one.
    for (size_t Skip = size_t(N); Skip && First < Iov.size();) {
      if (Skip >= Iov[First].iov_len) {
        Skip -= Iov[First++].iov_len;
        continue;
      }
      Iov[First].iov_base = static_cast<char *>(Iov[First].iov_base) + Skip;
      Iov[First].iov_len -= Skip;
      Skip = 0;
    }
  }
  R.recordChunk(0, Done);
  return Done;
}
