// ompx_target_pread reads the full count into device memory: whole files,
// interior offsets of the file and of the buffer, and count 0. The device
// buffer is checked by copying it back with omp_target_memcpy.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((size_t)(1 << 20) + 123)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *data = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    data[i] = ot_pattern(i, 1);
  int wfd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (wfd < 0 || write(wfd, data, SIZE) != (ssize_t)SIZE)
    return 3;
  close(wfd);

  int dev = omp_get_default_device();
  int fd = open(argv[1], O_RDONLY);
  char *buf = omp_target_alloc(SIZE + 64, dev);
  OT_EXPECT(fd >= 0 && buf != NULL, "file and device buffer");

  ssize_t n = ompx_target_pread(fd, buf, SIZE, 0, dev);
  printf("whole file: %zd\n", n);
  OT_EXPECT(n == (ssize_t)SIZE &&
                ot_device_mismatches(buf, dev, SIZE, 0, 1) == 0,
            "whole file read exactly");

  // Unaligned file offset, unaligned interior device pointer.
  n = ompx_target_pread(fd, buf + 17, 100001, 4099, dev);
  printf("interior: %zd\n", n);
  OT_EXPECT(n == 100001 &&
                ot_device_mismatches(buf + 17, dev, 100001, 4099, 1) == 0,
            "offset 4099 into buf+17 read exactly");
  // The bytes before buf+17 are what the first read left there.
  OT_EXPECT(ot_device_mismatches(buf, dev, 17, 0, 1) == 0,
            "bytes before buf+17 untouched");

  // One byte, the last one of the file.
  n = ompx_target_pread(fd, buf, 1, SIZE - 1, dev);
  OT_EXPECT(n == 1 && ot_device_mismatches(buf, dev, 1, SIZE - 1, 1) == 0,
            "last byte of the file");

  // Count 0 returns 0 wherever the offset is.
  OT_EXPECT(ompx_target_pread(fd, buf, 0, 0, dev) == 0, "count 0 returns 0");
  OT_EXPECT(ompx_target_pread(fd, buf, 0, 1 << 30, dev) == 0,
            "count 0 past the end of file returns 0");

  // A descriptor opened read-write reads too, and the file offset of the
  // descriptor is not moved (pread semantics).
  int rw = open(argv[1], O_RDWR);
  lseek(rw, 5, SEEK_SET);
  n = ompx_target_pread(rw, buf, 65536, 65536, dev);
  OT_EXPECT(n == 65536 && ot_device_mismatches(buf, dev, 65536, 65536, 1) == 0,
            "O_RDWR descriptor reads");
  OT_EXPECT(lseek(rw, 0, SEEK_CUR) == 5, "file offset unchanged");
  close(rw);

  omp_target_free(buf, dev);
  close(fd);
  free(data);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: file and device buffer
// CHECK: whole file: 1048699
// CHECK: PASS: whole file read exactly
// CHECK: interior: 100001
// CHECK: PASS: offset 4099 into buf+17 read exactly
// CHECK: PASS: bytes before buf+17 untouched
// CHECK: PASS: last byte of the file
// CHECK: PASS: count 0 returns 0
// CHECK: PASS: count 0 past the end of file returns 0
// CHECK: PASS: O_RDWR descriptor reads
// CHECK: PASS: file offset unchanged
// CHECK-NOT: FAIL
// CHECK: failures: 0
