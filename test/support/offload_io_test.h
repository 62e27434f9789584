// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the ompx_io lit tests: errno names and a check that a call
// failed with -1 and a given errno.
#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_IO_TEST_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_IO_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "offload_test.h"

/// The symbolic name of the errno values the tests expect.
static const char *ename(int e) {
  switch (e) {
  case 0: return "0";
  case EBADF: return "EBADF";
  case EINVAL: return "EINVAL";
  case EFAULT: return "EFAULT";
  case ENODEV: return "ENODEV";
  case ENOSPC: return "ENOSPC";
  case EIO: return "EIO";
  case ENOTSUP: return "ENOTSUP";
  case EAGAIN: return "EAGAIN";
  default: return strerror(e);
  }
}

/// expr must return -1 and set errno to err.
#define EXPECT_ERRNO(expr, err, what)                                          \
  do {                                                                         \
    errno = 0;                                                                 \
    long long r_ = (long long)(expr);                                          \
    int e_ = errno;                                                            \
    OT_EXPECT(r_ == -1 && e_ == (err), "%s -> %lld %s", what, r_, ename(e_));  \
  } while (0)

/// Create (or truncate) path and fill it with 4096 zero bytes: the file
/// most error tests read from. The descriptor (read-write), or -1.
static int ot_open_zeros(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  char zeros[4096] = {0};
  if (fd >= 0 && write(fd, zeros, sizeof zeros) != sizeof zeros) {
    close(fd);
    return -1;
  }
  return fd;
}

#endif
