// SPDX-License-Identifier: Apache-2.0
//
// The file of the O_DIRECT lit tests: the byte pattern written to it, and
// the file opened again for reading, with O_DIRECT where asked and where
// the file system has it.
#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_ODIRECT_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_ODIRECT_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "offload_pattern.h"

// The amdgcn device pass includes fcntl.h before a test's _GNU_SOURCE
// (docs/testing.md); it runs no host code, so any value does.
#if !defined(O_DIRECT) && defined(__AMDGCN__)
#define O_DIRECT 0
#endif

/// Write `size` bytes of the pattern `seed` to `path` and sync them, then
/// open it read-only, with O_DIRECT if `direct`. Prints "O_DIRECT
/// supported", or "O_DIRECT unsupported" where the file system refuses it
/// (EINVAL) and the file is opened without. The descriptor, or -1.
static int ot_open_pattern_file(const char *path, size_t size, unsigned seed,
                                int direct) {
  unsigned char *data = (unsigned char *)malloc(size + 1);
  int wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int ok = data && wfd >= 0;
  for (size_t i = 0; ok && i < size; ++i)
    data[i] = ot_pattern(i, seed);
  ok = ok && write(wfd, data, size) == (ssize_t)size && fsync(wfd) == 0;
  free(data);
  if (wfd >= 0)
    close(wfd);
  if (!ok)
    return -1;
  int fd = open(path, O_RDONLY | (direct ? O_DIRECT : 0));
  if (fd < 0 && errno == EINVAL && direct) {
    printf("O_DIRECT unsupported\n");
    return open(path, O_RDONLY);
  }
  printf("O_DIRECT supported\n");
  return fd;
}

#endif
