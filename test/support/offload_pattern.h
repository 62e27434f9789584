// SPDX-License-Identifier: Apache-2.0
//
// The byte pattern that the file and data-path lit tests write and expect,
// and a check of a device buffer against it.
#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_PATTERN_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_PATTERN_H

#include <omp.h>
#include <stddef.h>
#include <stdlib.h>

/// Byte `o` of the pattern `seed`. Bytes 256 B and 64 KiB apart differ too,
/// so a chunk read from or written to the wrong offset does not match.
static inline unsigned char ot_pattern(size_t o, unsigned seed) {
  return (unsigned char)(o * 7 + (o >> 8) * 31 + (o >> 16) * 131 + seed);
}

/// How many of the `count` bytes at `dbuf` on device `dev` differ from
/// ot_pattern(foff + i, seed): the bytes a read at file offset `foff` of a
/// file holding the pattern must have put there. (size_t)-1 when they cannot
/// be copied to the host.
static inline size_t ot_device_mismatches(const void *dbuf, int dev,
                                          size_t count, size_t foff,
                                          unsigned seed) {
  unsigned char *h = (unsigned char *)malloc(count + 1);
  if (!h ||
      omp_target_memcpy(h, dbuf, count, 0, 0, omp_get_initial_device(), dev)) {
    free(h);
    return (size_t)-1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i)
    bad += h[i] != ot_pattern(foff + i, seed);
  free(h);
  return bad;
}

#endif
