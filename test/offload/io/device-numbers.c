// Every device of the host plugin is reached by its OpenMP device number:
// devices 1..3 (not only the default device) read and write their own
// allocations, and count in their own stats. A buffer of one device is
// foreign to another (EFAULT); omp_get_num_devices() + 1 is no device
// (ENODEV). With OFFLOADIO_HOST_NUM_DEVICES=6 device 5 works and 7 does not.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env -u OFFLOADIO_HOST_NUM_DEVICES %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,FOUR
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=6 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,SIX

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE (1 << 20)

static uint64_t total(const uint64_t *v) {
  uint64_t s = 0;
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    s += v[p];
  return s;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int ndev = omp_get_num_devices();
  printf("devices: %d\n", ndev);
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;

  // Device d reads (d + 1) * 1000 bytes at offset d and writes them back
  // at SIZE + d * SIZE.
  char *bufs[16];
  for (int d = 0; d < ndev; ++d) {
    bufs[d] = omp_target_alloc(SIZE, d);
    size_t len = (size_t)(d + 1) * 1000;
    ssize_t n = ompx_target_pread(fd, bufs[d], len, d, d);
    memset(h, 0, len);
    omp_target_memcpy(h, bufs[d], len, 0, 0, omp_get_initial_device(), d);
    size_t bad = 0;
    for (size_t i = 0; i < len; ++i)
      bad += h[i] != ot_pattern(d + i, 1);
    ssize_t m = ompx_target_pwrite(fd, bufs[d], len, SIZE + (off_t)d * SIZE, d);
    OT_EXPECT(n == (ssize_t)len && bad == 0 && m == (ssize_t)len,
              "device %d reads and writes its own memory", d);
  }
  // The written copies are in the file.
  int file_ok = 1;
  for (int d = 0; d < ndev; ++d) {
    size_t len = (size_t)(d + 1) * 1000;
    memset(h, 0, len);
    file_ok &= pread(fd, h, len, SIZE + (off_t)d * SIZE) == (ssize_t)len;
    for (size_t i = 0; i < len; ++i)
      file_ok &= h[i] == ot_pattern(d + i, 1);
  }
  OT_EXPECT(file_ok, "every device's write landed");

  // Each device counted exactly its own transfers.
  for (int d = 0; d < ndev; ++d) {
    ompx_io_stats_t s;
    int rc = ompx_io_get_stats(d, &s);
    printf("device %d: rc %d read %llu written %llu\n", d, rc,
           (unsigned long long)total(s.bytes_read),
           (unsigned long long)total(s.bytes_written));
  }

  // One device's buffer is foreign to another.
  errno = 0;
  ssize_t n = ompx_target_pread(fd, bufs[1], 100, 0, 2);
  OT_EXPECT(n == -1 && errno == EFAULT, "device 1's buffer on device 2: EFAULT");
  errno = 0;
  n = ompx_target_pwrite(fd, bufs[3], 100, 0, 0);
  OT_EXPECT(n == -1 && errno == EFAULT, "device 3's buffer on device 0: EFAULT");

  // Past the initial device (which is omp_get_num_devices()).
  errno = 0;
  n = ompx_target_pread(fd, bufs[0], 100, 0, ndev + 1);
  OT_EXPECT(n == -1 && errno == ENODEV, "device %d: ENODEV", ndev + 1);

  for (int d = 0; d < ndev; ++d)
    omp_target_free(bufs[d], d);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// FOUR: devices: 4
// SIX: devices: 6
// CHECK: PASS: device 0 reads and writes its own memory
// CHECK: PASS: device 1 reads and writes its own memory
// CHECK: PASS: device 2 reads and writes its own memory
// CHECK: PASS: device 3 reads and writes its own memory
// SIX: PASS: device 4 reads and writes its own memory
// SIX: PASS: device 5 reads and writes its own memory
// CHECK: PASS: every device's write landed
// CHECK: device 0: rc 0 read 1000 written 1000
// CHECK: device 1: rc 0 read 2000 written 2000
// CHECK: device 2: rc 0 read 3000 written 3000
// CHECK: device 3: rc 0 read 4000 written 4000
// SIX: device 4: rc 0 read 5000 written 5000
// SIX: device 5: rc 0 read 6000 written 6000
// CHECK: PASS: device 1's buffer on device 2: EFAULT
// CHECK: PASS: device 3's buffer on device 0: EFAULT
// FOUR: PASS: device 5: ENODEV
// SIX: PASS: device 7: ENODEV
// CHECK-NOT: FAIL
// CHECK: failures: 0
