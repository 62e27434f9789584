/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The most bytes one file call is asked to move: pread, pwrite, preadv and
 * pwritev of the file engine and of libompx_io (FullTransfer.h), the
 * vendors' storage DMA calls (cuFileRead/Write, AIS), and the baseline
 * loop of the ompx-io benchmark. Linux moves at most MAX_RW_COUNT
 * (0x7ffff000) bytes per call, and so does cuFile; 1 GiB stays below it and
 * is a multiple of every alignment O_DIRECT and the vendors ask for.
 * C and C++: the ompx-io tool, a C program, reads it too.
 */
#ifndef OFFLOADIO_IO_IOCALLLIMIT_H
#define OFFLOADIO_IO_IOCALLLIMIT_H

/** The limit, as a size_t constant expression. */
#define OFFLOADIO_MAX_IO_PER_CALL ((size_t)1 << 30)

#ifdef __cplusplus
#include <cstddef>

namespace offloadio {
/// The most bytes one file call is asked to move (see the file comment).
inline constexpr size_t MaxIOPerCall = OFFLOADIO_MAX_IO_PER_CALL;
} // namespace offloadio
#else
#include <stddef.h>
#endif

#endif /* OFFLOADIO_IO_IOCALLLIMIT_H */
