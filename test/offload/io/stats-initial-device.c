// ompx_io_get_stats on the initial device succeeds, as ompx_io_paths does
// there: its counters are the initial device's own transfers, all on the
// host path (OMPX_IO_PATH_HOST), counted as for any device: the bytes moved
// (a short read counts what it read, a failed transfer nothing) and each
// request not refused at submission once. No other path and no fallback is
// ever counted there, and its transfers are not counted on other devices.
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
#include "offload_test.h"
#include "ompx_io.h"

static uint64_t sum(const uint64_t *v) {
  uint64_t s = 0;
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    s += v[p];
  return s;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int host = omp_get_initial_device();
  int dev = omp_get_default_device();
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int full = open("/dev/full", O_WRONLY);
  char *h = calloc(1, 100000);
  if (fd < 0 || full < 0 || pwrite(fd, h, 5000, 0) != 5000)
    return 3;

  ompx_io_stats_t s0, s1, d0, d1;
  OT_EXPECT(ompx_io_get_stats(host, &s0) == 0, "stats of the initial device");
  OT_EXPECT(ompx_io_get_stats(dev, &d0) == 0, "stats of the device");
  OT_EXPECT(ompx_target_pread(fd, h, 3000, 0, host) == 3000, "read 3000");
  OT_EXPECT(ompx_target_pread(fd, h, 3000, 4000, host) == 1000,
            "short read of 1000");
  ompx_io_request_t r;
  OT_EXPECT(ompx_target_pwrite_async(fd, h, 777, 10, host, &r) == 0 &&
                ompx_io_wait(r) == 777,
            "async write 777");
  OT_EXPECT(ompx_target_pwrite(-1, h, 100, 0, host) == -1 && errno == EBADF,
            "write refused at submission");
  OT_EXPECT(ompx_target_pwrite(full, h, 100, 0, host) == -1 &&
                errno == ENOSPC,
            "write failing in transfer");
  OT_EXPECT(ompx_io_get_stats(host, &s1) == 0, "stats after");
  OT_EXPECT(ompx_io_get_stats(dev, &d1) == 0, "device stats after");

  const int H = OMPX_IO_PATH_HOST;
  printf("host path: read %llu written %llu, %llu reads %llu writes\n",
         (unsigned long long)(s1.bytes_read[H] - s0.bytes_read[H]),
         (unsigned long long)(s1.bytes_written[H] - s0.bytes_written[H]),
         (unsigned long long)(s1.reads[H] - s0.reads[H]),
         (unsigned long long)(s1.writes[H] - s0.writes[H]));
  OT_EXPECT(sum(s1.bytes_read) - s1.bytes_read[H] == 0 &&
                sum(s1.bytes_written) - s1.bytes_written[H] == 0 &&
                sum(s1.reads) - s1.reads[H] == 0 &&
                sum(s1.writes) - s1.writes[H] == 0,
            "nothing on other paths");
  OT_EXPECT(s1.fallbacks == 0 && s1.last_fallback[0] == '\0', "no fallback");
  OT_EXPECT(sum(d1.bytes_read) == sum(d0.bytes_read) &&
                sum(d1.bytes_written) == sum(d0.bytes_written) &&
                sum(d1.reads) == sum(d0.reads) &&
                sum(d1.writes) == sum(d0.writes),
            "the device counted none of it");
  OT_EXPECT(ompx_io_get_stats(host, NULL) == -1 && errno == EINVAL,
            "NULL stats refused");
  OT_EXPECT(ompx_io_get_stats(host + 7, &s1) == -1 && errno == ENODEV,
            "unknown device refused");

  close(fd);
  close(full);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: stats of the initial device
// CHECK: PASS: stats of the device
// CHECK: PASS: read 3000
// CHECK: PASS: short read of 1000
// CHECK: PASS: async write 777
// CHECK: PASS: write refused at submission
// CHECK: PASS: write failing in transfer
// CHECK: PASS: stats after
// CHECK: host path: read 4000 written 777, 2 reads 2 writes
// CHECK: PASS: nothing on other paths
// CHECK: PASS: no fallback
// CHECK: PASS: the device counted none of it
// CHECK: PASS: NULL stats refused
// CHECK: PASS: unknown device refused
// CHECK-NOT: FAIL
// CHECK: failures: 0
