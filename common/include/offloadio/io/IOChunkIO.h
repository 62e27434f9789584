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

/// Read chunk \p Index of \p R (\p Len bytes at \p FileOffset) into \p Buf;
/// the bytes read, short only at end of file.
Expected<size_t> readChunk(SysTy &Sys, IORequestTy &R, size_t Index, char *Buf,
                           size_t Len, off_t FileOffset);

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

/// Read the one chunk of gathered request \p R into \p Buf with one pread
/// (continued as readFully) and record the bytes read and an error at the
/// byte where it struck. Returns the bytes read, also those before an
/// error: they are good.
size_t readGatheredChunk(SysTy &Sys, IORequestTy &R, char *Buf);

/// Write the one chunk of gathered request \p R from \p Buf; records as
/// readGatheredChunk. Returns the bytes written.
size_t writeGatheredChunk(SysTy &Sys, IORequestTy &R, const char *Buf);

} // namespace offloadio

#endif // OFFLOADIO_IO_IOCHUNKIO_H
