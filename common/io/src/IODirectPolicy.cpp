// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IODirectPolicy.h"
#include "offloadio/io/IODescriptor.h"
#include "offloadio/io/Sys.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace offloadio;

std::optional<IOChunkLayoutTy>
IOChunkLayoutTy::aligned(uint64_t Offset, size_t Count, size_t Geometry,
                         size_t ChunkSize) {
  uint64_t Begin = Offset, End = Begin + Count;
  uint64_t FirstAligned = (Begin + Geometry - 1) / Geometry * Geometry;
  uint64_t LastAligned = End / Geometry * Geometry;
  if (FirstAligned >= LastAligned)
    return std::nullopt;
  return IOChunkLayoutTy{size_t(FirstAligned - Begin),
                         size_t(LastAligned - FirstAligned),
                         size_t(End - LastAligned), ChunkSize};
}

IODirectFdsTy offloadio::openDirectFds(SysTy &Sys, const IOConfigTy &Config,
                                       bool Write, int CallerFd, int Flags,
                                       int OwnFd) {
  IODirectFdsTy S;
  bool CallerDirect = Flags & O_DIRECT;
  S.BufferedIsDirect = CallerDirect;
  IODirectPolicyTy Policy = Config.ODirect;
  if (!CallerDirect && Policy != IODirectPolicyTy::On)
    return S; // Buffered, as always.
  // Only regular files and block devices are reopened: opening a FIFO
  // waits for a peer, forever if none comes.
  std::string NotAFile;
  if (!canReopen(Sys, CallerFd, NotAFile)) {
    S.Note = ", O_DIRECT: fd is " + NotAFile + ", not reopened";
    return S;
  }
  int Mode = (Write ? O_WRONLY : O_RDONLY) | (Flags & (O_SYNC | O_DSYNC));
  // pwrite on an O_APPEND descriptor appends wherever the end of file is:
  // such a write has no aligned offsets to split on. A buffered one stays
  // buffered; an O_DIRECT one keeps O_DIRECT, unsplit, with a buffered twin
  // that appends too for what O_DIRECT refuses with EINVAL.
  bool Append = Write && (Flags & O_APPEND);
  if (Append && !CallerDirect) {
    S.Note = ", O_DIRECT not split: the fd has O_APPEND";
    return S;
  }
  if (Append)
    Mode |= O_APPEND;
  auto ReopenFailed = [&](const char *What) {
    return std::string(", ") + What + " (reopen: " + std::strerror(errno) + ")";
  };
  // open(2) of a slow file system (FUSE, NFS) may be interrupted by a
  // signal: that is no reason to lose O_DIRECT or the buffered twin.
  auto Reopen = [&](int Flags) {
    int New;
    do
      New = Sys.reopen(CallerFd, Flags);
    while (New < 0 && errno == EINTR);
    return New;
  };

  if (CallerDirect) {
    // Unaligned heads and tails (and, with "off", everything) need a
    // descriptor of the file without O_DIRECT.
    int Twin = Reopen(Mode);
    if (Twin < 0) {
      S.Note = ReopenFailed("O_DIRECT fd used as is");
      return S;
    }
    S.TwinFd = S.BufFd = Twin;
    S.BufferedIsDirect = false;
    if (Policy == IODirectPolicyTy::Off) {
      S.Note = ", O_DIRECT off: buffered reopen of the fd";
      return S;
    }
    S.DirectFd = OwnFd;
  } else {
    int Twin = Reopen(Mode | O_DIRECT);
    if (Twin < 0) {
      // EINVAL: the file system has no O_DIRECT (tmpfs); buffered it is.
      S.Note = ReopenFailed("O_DIRECT unavailable, buffered");
      return S;
    }
    S.TwinFd = S.DirectFd = Twin;
  }

  size_t Align = Sys.directIOAlignment(S.DirectFd);
  if (!Align)
    Align = 4096;
  S.MemAlign = Align;
  if (Append) {
    S.Note = ", O_DIRECT not split: the fd has O_APPEND; EINVAL retried "
             "buffered";
    return S;
  }
  // Buffered heads and tails and O_DIRECT middles share no page: buffered
  // writes would read-modify-write a page around the middle's blocks.
  size_t Geometry = Align;
  long Page = ::sysconf(_SC_PAGESIZE);
  if (Page > 0 && size_t(Page) > Align && size_t(Page) % Align == 0)
    Geometry = size_t(Page);
  if (Geometry > Config.DirectChunkSize) {
    S.Note = ", O_DIRECT alignment " + std::to_string(Align) +
             " exceeds the chunk size, buffered";
    S.DirectFd = -1;
    return S;
  }
  S.Geometry = Geometry;
  return S;
}

IODirectSetupTy offloadio::layoutDirect(const IODirectFdsTy &Fds,
                                        const IOConfigTy &Config,
                                        off_t Offset, size_t Count) {
  IODirectSetupTy S;
  S.BufFd = Fds.BufFd;
  S.DirectFd = Fds.DirectFd;
  S.MemAlign = Fds.MemAlign;
  S.Note = Fds.Note;
  if (S.DirectFd < 0 || !Fds.Geometry)
    return S;
  // Large chunks for the O_DIRECT middle, on aligned boundaries.
  size_t ChunkSize = Config.DirectChunkSize / Fds.Geometry * Fds.Geometry;
  S.Layout = IOChunkLayoutTy::aligned(uint64_t(Offset), Count, Fds.Geometry,
                                      ChunkSize);
  if (!S.Layout) {
    // No aligned block inside: all of it goes buffered, in plain chunks of
    // the O_DIRECT chunk size.
    S.Layout = IOChunkLayoutTy::plain(Count, ChunkSize);
    S.DirectFd = -1;
    S.Note = ", O_DIRECT: no aligned block in the range, buffered";
  } else {
    S.Note = ", O_DIRECT for the aligned middle (alignment " +
             std::to_string(Fds.MemAlign) + ")";
  }
  return S;
}

IODirectSetupTy offloadio::decideDirect(SysTy &Sys, const IOConfigTy &Config,
                                        bool Write, int CallerFd, int Flags,
                                        int OwnFd, off_t Offset,
                                        size_t Count) {
  IODirectFdsTy Fds = openDirectFds(Sys, Config, Write, CallerFd, Flags, OwnFd);
  IODirectSetupTy S = layoutDirect(Fds, Config, Offset, Count);
  S.TwinFd = Fds.TwinFd;
  return S;
}
