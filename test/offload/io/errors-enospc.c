// ENOSPC from the file system reaches the caller unchanged: writes to
// /dev/full fail with ENOSPC, synchronously, and for async writes at
// ompx_io_wait (the submission itself succeeds). Device and host memory,
// every path that can serve the device.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K %libomptarget-run-generic | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

static void check(const char *where, int dev, void *buf, int full) {
  char what[128];
  snprintf(what, sizeof what, "%s: write 1 MiB to /dev/full", where);
  EXPECT_ERRNO(ompx_target_pwrite(full, buf, 1 << 20, 0, dev), ENOSPC, what);
  snprintf(what, sizeof what, "%s: write 1 byte to /dev/full", where);
  EXPECT_ERRNO(ompx_target_pwrite(full, buf, 1, 12345, dev), ENOSPC, what);
  ompx_io_request_t req = NULL;
  int rc = ompx_target_pwrite_async(full, buf, 1 << 20, 0, dev, &req);
  OT_EXPECT(rc == 0 && req != NULL, "%s: async write to /dev/full submitted",
            where);
  if (rc == 0) {
    snprintf(what, sizeof what, "%s: async write to /dev/full waits", where);
    EXPECT_ERRNO(ompx_io_wait(req), ENOSPC, what);
  }
  // Count 0 writes nothing, so nothing fails.
  OT_EXPECT(ompx_target_pwrite(full, buf, 0, 0, dev) == 0,
            "%s: count 0 to /dev/full returns 0", where);
}

int main(void) {
  int full = open("/dev/full", O_WRONLY);
  OT_EXPECT(full >= 0, "/dev/full opened");
  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(1 << 20, dev);
  void *hbuf = calloc(1, 1 << 20);
  check("device", dev, dbuf, full);
  check("host", omp_get_initial_device(), hbuf, full);
  omp_target_free(dbuf, dev);
  free(hbuf);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: /dev/full opened
// CHECK: PASS: device: write 1 MiB to /dev/full -> -1 ENOSPC
// CHECK: PASS: device: write 1 byte to /dev/full -> -1 ENOSPC
// CHECK: PASS: device: async write to /dev/full submitted
// CHECK: PASS: device: async write to /dev/full waits -> -1 ENOSPC
// CHECK: PASS: device: count 0 to /dev/full returns 0
// CHECK: PASS: host: write 1 MiB to /dev/full -> -1 ENOSPC
// CHECK: PASS: host: write 1 byte to /dev/full -> -1 ENOSPC
// CHECK: PASS: host: async write to /dev/full submitted
// CHECK: PASS: host: async write to /dev/full waits -> -1 ENOSPC
// CHECK: PASS: host: count 0 to /dev/full returns 0
// CHECK-NOT: FAIL
// CHECK: failures: 0
