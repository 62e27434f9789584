// EINVAL: a negative offset (also with count 0), an offset + count beyond
// the off_t range, a NULL request pointer, and ompx_io_test / ompx_io_wait
// of NULL. Device and host memory alike. A count above SSIZE_MAX is EFAULT,
// as Linux's pread(2) says (no address space holds the buffer), before the
// offset range is looked at.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

static void check_all(const char *where, int dev, void *buf, int fd) {
  char what[128];
  ompx_io_request_t req = NULL;
  snprintf(what, sizeof what, "%s: read offset -1", where);
  EXPECT_ERRNO(ompx_target_pread(fd, buf, 64, -1, dev), EINVAL, what);
  snprintf(what, sizeof what, "%s: write offset -4096", where);
  EXPECT_ERRNO(ompx_target_pwrite(fd, buf, 64, -4096, dev), EINVAL, what);
  snprintf(what, sizeof what, "%s: read count 0 offset -1", where);
  EXPECT_ERRNO(ompx_target_pread(fd, buf, 0, -1, dev), EINVAL, what);
  snprintf(what, sizeof what, "%s: read count SSIZE_MAX+1", where);
  EXPECT_ERRNO(ompx_target_pread(fd, buf, (size_t)SSIZE_MAX + 1, 0, dev),
               EFAULT, what);
  snprintf(what, sizeof what, "%s: read count SSIZE_MAX+1 at INT64_MAX", where);
  EXPECT_ERRNO(ompx_target_pread(fd, buf, (size_t)SSIZE_MAX + 1, INT64_MAX,
                                 dev),
               EFAULT, what);
  snprintf(what, sizeof what, "%s: async read offset -1", where);
  EXPECT_ERRNO(ompx_target_pread_async(fd, buf, 64, -1, dev, &req), EINVAL,
               what);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
  snprintf(what, sizeof what, "%s: async write offset INT64_MIN", where);
  EXPECT_ERRNO(ompx_target_pwrite_async(fd, buf, 64, INT64_MIN, dev, &req),
               EINVAL, what);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
  snprintf(what, sizeof what, "%s: async read without request", where);
  EXPECT_ERRNO(ompx_target_pread_async(fd, buf, 64, 0, dev, NULL), EINVAL,
               what);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char zeros[4096] = {0};
  if (fd < 0 || write(fd, zeros, sizeof zeros) != sizeof zeros)
    return 3;
  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(4096, dev);
  check_all("device", dev, dbuf, fd);
  // Beyond the off_t range: the engine checks, the kernel would too.
  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, 64, INT64_MAX - 10, dev), EINVAL,
               "device: read offset + count past INT64_MAX");
  void *hbuf = malloc(4096);
  check_all("host", omp_get_initial_device(), hbuf, fd);

  EXPECT_ERRNO(ompx_io_test(NULL), EINVAL, "test NULL");
  EXPECT_ERRNO(ompx_io_wait(NULL), EINVAL, "wait NULL");

  OT_EXPECT(ompx_target_pread(fd, dbuf, 4096, 0, dev) == 4096,
            "valid read still works");
  omp_target_free(dbuf, dev);
  free(hbuf);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device: read offset -1 -> -1 EINVAL
// CHECK: PASS: device: write offset -4096 -> -1 EINVAL
// CHECK: PASS: device: read count 0 offset -1 -> -1 EINVAL
// CHECK: PASS: device: read count SSIZE_MAX+1 -> -1 EFAULT
// CHECK: PASS: device: read count SSIZE_MAX+1 at INT64_MAX -> -1 EFAULT
// CHECK: PASS: device: async read offset -1 -> -1 EINVAL
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: async write offset INT64_MIN -> -1 EINVAL
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: async read without request -> -1 EINVAL
// CHECK: PASS: device: read offset + count past INT64_MAX -> -1 EINVAL
// CHECK: PASS: host: read offset -1 -> -1 EINVAL
// CHECK: PASS: host: write offset -4096 -> -1 EINVAL
// CHECK: PASS: host: read count 0 offset -1 -> -1 EINVAL
// CHECK: PASS: host: read count SSIZE_MAX+1 -> -1 EFAULT
// CHECK: PASS: host: read count SSIZE_MAX+1 at INT64_MAX -> -1 EFAULT
// CHECK: PASS: host: async read offset -1 -> -1 EINVAL
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: async write offset INT64_MIN -> -1 EINVAL
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: async read without request -> -1 EINVAL
// CHECK: PASS: test NULL -> -1 EINVAL
// CHECK: PASS: wait NULL -> -1 EINVAL
// CHECK: PASS: valid read still works
// CHECK-NOT: FAIL
// CHECK: failures: 0
