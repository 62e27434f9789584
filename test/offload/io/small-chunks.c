// The smallest chunk size (64K) with many workers and shallow rings: a
// request of ~130 chunks is spread over 16 workers whose staging rings wrap
// many times; reads and writes at unaligned offsets and lengths still move
// exact data, on every path that serves the device.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=16 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=16 OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_RING_DEPTH=1 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=16 OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_RING_DEPTH=3 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=100K OMPX_IO_THREADS=1 OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((size_t)(8 << 20) + 12345)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != (ssize_t)SIZE)
    return 3;
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(SIZE, dev);

  // Whole file, several times (rings wrap across requests too).
  int all_ok = 1;
  for (int rep = 0; rep < 3; ++rep) {
    ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
    memset(h, 0, SIZE);
    omp_target_memcpy(h, dbuf, SIZE, 0, 0, omp_get_initial_device(), dev);
    size_t bad = 0;
    for (size_t i = 0; i < SIZE; ++i)
      bad += h[i] != ot_pattern(i, 1);
    all_ok &= n == (ssize_t)SIZE && bad == 0;
  }
  OT_EXPECT(all_ok, "whole file read exactly, three times");

  // Unaligned pieces: offset and length not multiples of anything.
  size_t off = 65536 * 3 + 4321, len = 65536 * 40 + 17;
  ssize_t n = ompx_target_pread(fd, dbuf + 11, len, off, dev);
  omp_target_memcpy(h, dbuf + 11, len, 0, 0, omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < len; ++i)
    bad += h[i] != ot_pattern(off + i, 1);
  OT_EXPECT(n == (ssize_t)len && bad == 0, "unaligned piece read exactly");

  // Write a new pattern from the device over the file at an odd offset.
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 77);
  omp_target_memcpy(dbuf, h, SIZE, 0, 0, dev, omp_get_initial_device());
  if (ftruncate(fd, 0) != 0)
    return 4;
  n = ompx_target_pwrite(fd, dbuf, SIZE, 999, dev);
  struct stat st;
  fstat(fd, &st);
  memset(h, 0xEE, SIZE);
  bad = pread(fd, h, SIZE, 999) != (ssize_t)SIZE;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 77);
  OT_EXPECT(n == (ssize_t)SIZE && st.st_size == (off_t)(SIZE + 999) && bad == 0,
            "whole buffer written exactly at offset 999");

  // And read back across end of file into a buffer with old contents.
  n = ompx_target_pread(fd, dbuf, SIZE, 999 + 65536 * 5 + 1, dev);
  OT_EXPECT(n == (ssize_t)(SIZE - 65536 * 5 - 1), "short read at end of file");

  omp_target_free(dbuf, dev);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: whole file read exactly, three times
// CHECK: PASS: unaligned piece read exactly
// CHECK: PASS: whole buffer written exactly at offset 999
// CHECK: PASS: short read at end of file
// CHECK-NOT: FAIL
// CHECK: failures: 0
