// Device numbers that name no device fail with ENODEV in every ompx call:
// omp_get_num_devices() + 1 (one past the initial device), a large number
// and omp_invalid_device (-2). Async submissions leave the request NULL.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char zeros[4096] = {0};
  if (fd < 0 || write(fd, zeros, sizeof zeros) != sizeof zeros)
    return 3;
  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(4096, dev);
  int bad[] = {omp_get_num_devices() + 1, 1000, -2};
  const char *names[] = {"num_devices+1", "1000", "-2"};
  for (int i = 0; i < 3; ++i) {
    char what[128];
    int d = bad[i];
    ompx_io_request_t req = NULL;
    ompx_io_stats_t st;
    unsigned mask = 0;
    ompx_lock_region_t region;
    uint64_t bytes[OMPX_COPY_NUM_PATHS], copies[OMPX_COPY_NUM_PATHS];
    snprintf(what, sizeof what, "device %s: pread", names[i]);
    EXPECT_ERRNO(ompx_target_pread(fd, dbuf, 64, 0, d), ENODEV, what);
    snprintf(what, sizeof what, "device %s: pwrite", names[i]);
    EXPECT_ERRNO(ompx_target_pwrite(fd, dbuf, 64, 0, d), ENODEV, what);
    snprintf(what, sizeof what, "device %s: pread_async", names[i]);
    EXPECT_ERRNO(ompx_target_pread_async(fd, dbuf, 64, 0, d, &req), ENODEV,
                 what);
    OT_EXPECT(req == NULL, "device %s: request stays NULL", names[i]);
    snprintf(what, sizeof what, "device %s: pwrite_async", names[i]);
    EXPECT_ERRNO(ompx_target_pwrite_async(fd, dbuf, 64, 0, d, &req), ENODEV,
                 what);
    OT_EXPECT(req == NULL, "device %s: request stays NULL", names[i]);
    snprintf(what, sizeof what, "device %s: get_stats", names[i]);
    EXPECT_ERRNO(ompx_io_get_stats(d, &st), ENODEV, what);
    snprintf(what, sizeof what, "device %s: paths", names[i]);
    EXPECT_ERRNO(ompx_io_paths(d, &mask, NULL, 0), ENODEV, what);
    snprintf(what, sizeof what, "device %s: lock_info", names[i]);
    EXPECT_ERRNO(ompx_target_lock_info(zeros, d, &region), ENODEV, what);
    snprintf(what, sizeof what, "device %s: copy_counters", names[i]);
    EXPECT_ERRNO(ompx_target_copy_counters(d, bytes, copies), ENODEV, what);
  }
  // The last device exists.
  int last = omp_get_num_devices() - 1;
  void *lbuf = omp_target_alloc(4096, last);
  OT_EXPECT(ompx_target_pread(fd, lbuf, 4096, 0, last) == 4096,
            "the last device (num_devices-1) reads");
  omp_target_free(lbuf, last);
  omp_target_free(dbuf, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device num_devices+1: pread -> -1 ENODEV
// CHECK: PASS: device num_devices+1: pwrite -> -1 ENODEV
// CHECK: PASS: device num_devices+1: pread_async -> -1 ENODEV
// CHECK: PASS: device num_devices+1: request stays NULL
// CHECK: PASS: device num_devices+1: pwrite_async -> -1 ENODEV
// CHECK: PASS: device num_devices+1: request stays NULL
// CHECK: PASS: device num_devices+1: get_stats -> -1 ENODEV
// CHECK: PASS: device num_devices+1: paths -> -1 ENODEV
// CHECK: PASS: device num_devices+1: lock_info -> -1 ENODEV
// CHECK: PASS: device num_devices+1: copy_counters -> -1 ENODEV
// CHECK: PASS: device 1000: pread -> -1 ENODEV
// CHECK: PASS: device 1000: pwrite -> -1 ENODEV
// CHECK: PASS: device 1000: pread_async -> -1 ENODEV
// CHECK: PASS: device 1000: request stays NULL
// CHECK: PASS: device 1000: pwrite_async -> -1 ENODEV
// CHECK: PASS: device 1000: request stays NULL
// CHECK: PASS: device 1000: get_stats -> -1 ENODEV
// CHECK: PASS: device 1000: paths -> -1 ENODEV
// CHECK: PASS: device 1000: lock_info -> -1 ENODEV
// CHECK: PASS: device 1000: copy_counters -> -1 ENODEV
// CHECK: PASS: device -2: pread -> -1 ENODEV
// CHECK: PASS: device -2: pwrite -> -1 ENODEV
// CHECK: PASS: device -2: pread_async -> -1 ENODEV
// CHECK: PASS: device -2: request stays NULL
// CHECK: PASS: device -2: pwrite_async -> -1 ENODEV
// CHECK: PASS: device -2: request stays NULL
// CHECK: PASS: device -2: get_stats -> -1 ENODEV
// CHECK: PASS: device -2: paths -> -1 ENODEV
// CHECK: PASS: device -2: lock_info -> -1 ENODEV
// CHECK: PASS: device -2: copy_counters -> -1 ENODEV
// CHECK: PASS: the last device (num_devices-1) reads
// CHECK-NOT: FAIL
// CHECK: failures: 0
