// SPDX-License-Identifier: Apache-2.0
//
// pread/pwrite of one chunk of a request between the file and host memory,
// through the O_DIRECT descriptor where the chunk and memory allow it:
// shared by the direct and the staged path.
#ifndef OFFLOADIO_IO_IOCHUNKIO_H
#define OFFLOADIO_IO_IOCHUNKIO_H

#include "offloadio/Error.h"

#include <cstddef>
#include <sys/types.h>

namespace offloadio {

class IORequestTy;
class SysTy;

/// Read \p Len bytes of chunk \p Index of \p R (or of a piece of it) at
/// \p FileOffset into \p Buf, a staging buffer: the bytes read, short only
/// at end of file. O_DIRECT may write \p Buf past them (see
/// readChunkInPlace). \p ReadBefore, if given, gets the bytes read, also
/// those before an error: they are good.
Expected<size_t> readChunk(SysTy &Sys, IORequestTy &R, size_t Index, char *Buf,
                           size_t Len, off_t FileOffset,
                           size_t *ReadBefore = nullptr);

/// readChunk() into the request's own memory (the direct path), which keeps
/// its bytes past those read, as with pread(2). An O_DIRECT read that meets
/// the end of file zeroes the buffer past it, to the end of the request,
/// while it returns the short count: O_DIRECT reads here stop at the last
/// aligned offset below a file size seen by fstat (once per request, again
/// only when a chunk reaches past the size seen), the rest is read
/// buffered. A file that shrinks while the read runs may still see the
/// kernel zero what lies past its new end.
Expected<size_t> readChunkInPlace(SysTy &Sys, IORequestTy &R, size_t Index,
                                  char *Buf, size_t Len, off_t FileOffset);

/// Write \p Len bytes of chunk \p Index of \p R (or of a piece of it) at
/// \p FileOffset from \p Buf, through the O_DIRECT descriptor where it
/// may. \p Written gets the bytes written, also those before an error.
Error writeChunkPart(SysTy &Sys, IORequestTy &R, size_t Index, const char *Buf,
                     size_t Len, off_t FileOffset, size_t &Written);

/// Write chunk \p Index of \p R from \p Buf and record its result in \p R.
/// A write stopped by the file size limit (EFBIG) keeps the bytes written
/// before it: wait() returns them as pwrite(2) would. Returns the bytes
/// written.
size_t writeChunk(SysTy &Sys, IORequestTy &R, size_t Index, const char *Buf,
                  size_t Len, off_t FileOffset);

/// Move the one chunk of gathered request \p R (IORequestTy::gather)
/// between the file and its segments with preadv or pwritev, continued
/// across EINTR and short transfers, and record the bytes moved and an
/// error at the byte where it struck. Returns the bytes moved.
size_t moveGathered(SysTy &Sys, IORequestTy &R);

} // namespace offloadio

#endif // OFFLOADIO_IO_IOCHUNKIO_H
