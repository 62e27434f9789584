// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the ompx_io lit tests: errno names and a check that a call
// failed with -1 and a given errno.
#ifndef OFFLOADIO_TEST_SUPPORT_OFFLOAD_IO_TEST_H
#define OFFLOADIO_TEST_SUPPORT_OFFLOAD_IO_TEST_H

#include <errno.h>
#include <string.h>

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

#endif
