// SPDX-License-Identifier: Apache-2.0
//
// The byte pattern that the file and data-path lit tests write and expect,
// and checks of a device buffer against it.
#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_PATTERN_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_PATTERN_H

#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/// Byte `o` of the pattern `seed`. Bytes 256 B and 64 KiB apart differ too,
/// so a chunk read from or written to the wrong offset does not match.
static inline unsigned char ot_pattern(size_t o, unsigned seed) {
  return (unsigned char)(o * 7 + (o >> 8) * 31 + (o >> 16) * 131 + seed);
}

/// Fill the `count` bytes at `dbuf` on device `dev` with `marker`, before a
/// read that must leave the bytes past its count alone. 0 on success.
static inline int ot_device_fill(void *dbuf, int dev, size_t count,
                                 unsigned char marker) {
  unsigned char *h = (unsigned char *)malloc(count + 1);
  if (!h)
    return -1;
  memset(h, marker, count);
  int rc = omp_target_memcpy(dbuf, h, count, 0, 0, dev, omp_get_initial_device());
  free(h);
  return rc;
}

/// How many of the `count` bytes at `dbuf` on device `dev`, filled with
/// `marker` (ot_device_fill) before a read of `n` bytes at file offset
/// `foff` of a file holding the pattern `seed`, are not what pread(2) would
/// leave: the pattern in the first `n`, the marker in the rest. (size_t)-1
/// when they cannot be copied to the host.
static inline size_t ot_device_read_mismatches(const void *dbuf, int dev,
                                               size_t count, size_t n,
                                               size_t foff, unsigned seed,
                                               unsigned char marker) {
  unsigned char *h = (unsigned char *)malloc(count + 1);
  if (!h ||
      omp_target_memcpy(h, dbuf, count, 0, 0, omp_get_initial_device(), dev)) {
    free(h);
    return (size_t)-1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i)
    bad += h[i] != (i < n ? ot_pattern(foff + i, seed) : marker);
  free(h);
  return bad;
}

/// How many of the `count` bytes at `dbuf` on device `dev` differ from
/// ot_pattern(foff + i, seed): the bytes a read at file offset `foff` of a
/// file holding the pattern must have put there. (size_t)-1 when they cannot
/// be copied to the host.
static inline size_t ot_device_mismatches(const void *dbuf, int dev,
                                          size_t count, size_t foff,
                                          unsigned seed) {
  return ot_device_read_mismatches(dbuf, dev, count, count, foff, seed, 0);
}

#endif
