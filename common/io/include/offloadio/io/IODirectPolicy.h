// SPDX-License-Identifier: Apache-2.0
//
// The O_DIRECT policy of the file engine (OMPX_IO_ODIRECT): whether a
// request's aligned middle goes through a descriptor with O_DIRECT, which
// descriptors it uses, and where its chunk boundaries lie. An unaligned head
// and tail go through a descriptor without O_DIRECT; the middle is cut on
// aligned file offsets.
#ifndef OFFLOADIO_IO_IODIRECTPOLICY_H
#define OFFLOADIO_IO_IODIRECTPOLICY_H

#include "offloadio/io/IOConfig.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace offloadio {

class SysTy;

/// How a request is cut into chunks: an optional unaligned head, the middle
/// in chunks of ChunkSize, an optional unaligned tail. Without O_DIRECT all
/// of it is middle.
struct IOChunkLayoutTy {
  size_t HeadLen = 0;   ///< Bytes before the first aligned file offset.
  size_t MiddleLen = 0; ///< Bytes of the aligned middle.
  size_t TailLen = 0;   ///< Bytes after the last aligned file offset.
  size_t ChunkSize = 1; ///< Chunk size of the middle.

  /// \p Count bytes, all middle.
  static IOChunkLayoutTy plain(size_t Count, size_t ChunkSize) {
    return {0, Count, 0, ChunkSize};
  }
  /// Chunks of \p ChunkSize with boundaries on file offsets that are
  /// multiples of \p Geometry, for [\p Offset, \p Offset + \p Count); none
  /// when no aligned block lies inside.
  static std::optional<IOChunkLayoutTy> aligned(uint64_t Offset, size_t Count,
                                                size_t Geometry,
                                                size_t ChunkSize);

  /// Number of chunks.
  size_t numChunks() const {
    return (HeadLen ? 1 : 0) + (MiddleLen + ChunkSize - 1) / ChunkSize +
           (TailLen ? 1 : 0);
  }
  /// Offset of chunk \p Index from the start of the request.
  size_t chunkOffset(size_t Index) const {
    if (HeadLen && Index == 0)
      return 0;
    size_t J = Index - (HeadLen ? 1 : 0);
    return HeadLen + std::min(J * ChunkSize, MiddleLen);
  }
  /// Length of chunk \p Index.
  size_t chunkLength(size_t Index) const {
    if (HeadLen && Index == 0)
      return HeadLen;
    size_t J = Index - (HeadLen ? 1 : 0);
    if (J * ChunkSize >= MiddleLen)
      return TailLen;
    return std::min(ChunkSize, MiddleLen - J * ChunkSize);
  }
  /// Whether chunk \p Index lies in the middle.
  bool inMiddle(size_t Index) const {
    if (HeadLen && Index == 0)
      return false;
    return (Index - (HeadLen ? 1 : 0)) * ChunkSize < MiddleLen;
  }
};

/// The O_DIRECT decision for one request.
struct IODirectSetupTy {
  /// The descriptor without O_DIRECT; -1: the request's own.
  int BufFd = -1;
  /// The descriptor with O_DIRECT for the middle; -1: none.
  int DirectFd = -1;
  /// A reopen of the file the request owns (closes), or -1.
  int TwinFd = -1;
  /// Memory alignment O_DIRECT needs.
  size_t MemAlign = 0;
  /// The chunk layout when it differs from plain chunks of OMPX_IO_CHUNK_SIZE.
  std::optional<IOChunkLayoutTy> Layout;
  /// The decision, for OMPX_IO_INFO (", O_DIRECT ..." or empty).
  std::string Note;
};

/// The descriptor part of the O_DIRECT decision, for one caller descriptor
/// and direction: which descriptors there are, their alignment, and the
/// geometry the middle of a request may be split on. A batch takes it once
/// per descriptor and direction, however many requests use it.
struct IODirectFdsTy {
  /// The descriptor without O_DIRECT; -1: the engine's duplicate.
  int BufFd = -1;
  /// The descriptor with O_DIRECT for the middle; -1: none.
  int DirectFd = -1;
  /// A reopen of the file, owned by whoever took the decision, or -1.
  int TwinFd = -1;
  /// Memory alignment O_DIRECT needs.
  size_t MemAlign = 0;
  /// File offsets the middle is cut on; 0: the request is not split (no
  /// O_DIRECT, or an O_APPEND write).
  size_t Geometry = 0;
  /// Whether BufFd (or the duplicate it stands for) has O_DIRECT itself: the
  /// caller's O_DIRECT descriptor could not be reopened without it.
  bool BufferedIsDirect = false;
  /// The decision, for OMPX_IO_INFO (", O_DIRECT ..." or empty).
  std::string Note;
};

/// Open the descriptors O_DIRECT needs for reads (\p Write false) or writes
/// through the caller's \p CallerFd with status \p Flags, of which \p OwnFd
/// is the engine's duplicate. Reopens the file as needed.
IODirectFdsTy openDirectFds(SysTy &Sys, const IOConfigTy &Config, bool Write,
                            int CallerFd, int Flags, int OwnFd);

/// The per-request part: the layout of \p Count bytes at \p Offset through
/// \p Fds. The result's TwinFd is -1: \p Fds keeps its owner.
IODirectSetupTy layoutDirect(const IODirectFdsTy &Fds,
                             const IOConfigTy &Config, off_t Offset,
                             size_t Count);

/// Decide O_DIRECT for one request: openDirectFds, then layoutDirect; the
/// request owns the reopen (TwinFd).
IODirectSetupTy decideDirect(SysTy &Sys, const IOConfigTy &Config, bool Write,
                             int CallerFd, int Flags, int OwnFd, off_t Offset,
                             size_t Count);

} // namespace offloadio

#endif // OFFLOADIO_IO_IODIRECTPOLICY_H
