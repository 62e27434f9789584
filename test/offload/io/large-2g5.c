// One call may move more than 2 GiB: a sparse 2.5 GiB file with marker
// bytes at known offsets (around the 1 GiB and 2 GiB boundaries) is read in
// one ompx_target_pread into one 2.5 GiB device allocation on the direct
// path, then into 2.5 GiB of host memory on the initial device. Markers
// and zeros at sample points (pre-set to 0xCC) are checked in place, which
// needs host-addressable device memory.
//
// REQUIRES: ompx-io, host-plugin
// Not under TSan: its 5 GiB of touched memory would need four times as much
// shadow memory and minutes of instrumented copying, and its threads are
// those of any transfer, which the other io tests run under TSan.
// UNSUPPORTED: thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_PATH=direct %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: rm -f %t.dat

#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"

#define GIB ((size_t)1 << 30)
#define SIZE (2 * GIB + GIB / 2)

static const size_t markers[] = {0,           4095,        GIB - 1,
                                 GIB,         2 * GIB - 1, 2 * GIB,
                                 2 * GIB + 12345, SIZE - 1};
#define NMARK (sizeof markers / sizeof markers[0])

static unsigned char marker_value(size_t i) { return (unsigned char)(0x11 * (i + 1)); }

static int is_marker(size_t off) {
  for (size_t i = 0; i < NMARK; ++i)
    if (markers[i] == off)
      return 1;
  return 0;
}

// Set sample points to 0xCC before a read.
static void poison(unsigned char *buf) {
  for (size_t off = 4097; off < SIZE; off += (1 << 20) + 3)
    buf[off] = 0xCC;
  for (size_t i = 0; i < NMARK; ++i)
    buf[markers[i]] = 0xCC;
}

static int check(unsigned char *buf, const char *what) {
  size_t bad = 0, samples = 0;
  for (size_t off = 4097; off < SIZE; off += (1 << 20) + 3, ++samples)
    if (!is_marker(off))
      bad += buf[off] != 0;
  for (size_t i = 0; i < NMARK; ++i)
    bad += buf[markers[i]] != marker_value(i);
  printf("%s: %zu samples, %zu markers, %zu bad\n", what, samples,
         (size_t)NMARK, bad);
  return bad == 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, (off_t)SIZE) != 0)
    return 3;
  for (size_t i = 0; i < NMARK; ++i) {
    unsigned char v = marker_value(i);
    if (pwrite(fd, &v, 1, (off_t)markers[i]) != 1)
      return 4;
  }

  int dev = omp_get_default_device();
  unsigned char *dbuf = omp_target_alloc(SIZE, dev);
  OT_EXPECT(dbuf != NULL, "2.5 GiB device allocation");
  if (!dbuf)
    return 5;
  poison(dbuf);
  ompx_io_stats_t s0, s1;
  ompx_io_get_stats(dev, &s0);
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
  ompx_io_get_stats(dev, &s1);
  printf("device read: %zd\n", n);
  OT_EXPECT(n == (ssize_t)SIZE, "one call read 2.5 GiB");
  OT_EXPECT(check(dbuf, "device"), "markers and zeros in device memory");
  printf("direct bytes: %llu\n",
         (unsigned long long)(s1.bytes_read[OMPX_IO_PATH_DIRECT] -
                              s0.bytes_read[OMPX_IO_PATH_DIRECT]));

  // The upper 1.5 GiB only, async, into the start of the buffer.
  poison(dbuf);
  ompx_io_request_t req;
  int rc = ompx_target_pread_async(fd, dbuf, SIZE, (off_t)GIB, dev, &req);
  n = rc == 0 ? ompx_io_wait(req) : -1;
  printf("device async read from 1 GiB: %zd\n", n);
  OT_EXPECT(n == (ssize_t)(SIZE - GIB) && dbuf[0] == marker_value(3) &&
                dbuf[GIB - 1] == marker_value(4) &&
                dbuf[GIB] == marker_value(5) &&
                dbuf[SIZE - GIB - 1] == marker_value(7),
            "markers moved down by 1 GiB");
  omp_target_free(dbuf, dev);

  // Host memory: the initial device.
  unsigned char *hbuf = malloc(SIZE);
  if (!hbuf)
    return 6;
  poison(hbuf);
  n = ompx_target_pread(fd, hbuf, SIZE, 0, omp_get_initial_device());
  printf("host read: %zd\n", n);
  OT_EXPECT(n == (ssize_t)SIZE && check(hbuf, "host"),
            "initial device read 2.5 GiB");
  free(hbuf);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: 2.5 GiB device allocation
// CHECK: device read: 2684354560
// CHECK: PASS: one call read 2.5 GiB
// CHECK: device: 2560 samples, 8 markers, 0 bad
// CHECK: PASS: markers and zeros in device memory
// CHECK: direct bytes: 2684354560
// CHECK: device async read from 1 GiB: 1610612736
// CHECK: PASS: markers moved down by 1 GiB
// CHECK: host read: 2684354560
// CHECK: host: 2560 samples, 8 markers, 0 bad
// CHECK: PASS: initial device read 2.5 GiB
// CHECK-NOT: FAIL
// CHECK: failures: 0
