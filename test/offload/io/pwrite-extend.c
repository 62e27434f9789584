// ompx_target_pwrite writes the full count from device memory and extends
// the file to exactly offset + count; a write past the end leaves a hole of
// zeros; a write inside the file keeps its size; count 0 writes nothing.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=5 \
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

#define SIZE 300001

static long long file_size(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? (long long)st.st_size : -1;
}

// Bytes of the file at foff that are not ot_pattern(first + i, 1) (or 0 when
// zero).
static size_t file_bad(int fd, size_t foff, size_t n, size_t first,
                       int zero) {
  unsigned char *h = malloc(n);
  if (pread(fd, h, n, foff) != (ssize_t)n)
    return (size_t)-1;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    bad += h[i] != (zero ? 0 : ot_pattern(first + i, 1));
  free(h);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int dev = omp_get_default_device();
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  char *buf = omp_target_alloc(SIZE, dev);
  omp_target_memcpy(buf, h, SIZE, 0, 0, dev, omp_get_initial_device());

  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  ssize_t n = ompx_target_pwrite(fd, buf, SIZE, 0, dev);
  printf("write: %zd size: %lld\n", n, file_size(fd));
  OT_EXPECT(n == SIZE && file_size(fd) == SIZE && file_bad(fd, 0, SIZE, 0, 0) == 0,
            "new file holds exactly the device data");

  // Past the end: a hole of zeros, then the data.
  n = ompx_target_pwrite(fd, buf + 5, 1000, 1000000, dev);
  printf("write past end: %zd size: %lld\n", n, file_size(fd));
  OT_EXPECT(n == 1000 && file_size(fd) == 1001000, "file extends exactly");
  OT_EXPECT(file_bad(fd, SIZE, 1000000 - SIZE, 0, 1) == 0, "the hole reads as zeros");
  OT_EXPECT(file_bad(fd, 1000000, 1000, 5, 0) == 0, "data after the hole");

  // Inside the file: size unchanged, neighbours untouched.
  n = ompx_target_pwrite(fd, buf + 200000, 500, 100, dev);
  OT_EXPECT(n == 500 && file_size(fd) == 1001000, "overwrite keeps the size");
  OT_EXPECT(file_bad(fd, 100, 500, 200000, 0) == 0 &&
                file_bad(fd, 0, 100, 0, 0) == 0 &&
                file_bad(fd, 600, SIZE - 600, 600, 0) == 0,
            "overwrite changes exactly its range");

  // Count 0 past the end does not extend the file.
  OT_EXPECT(ompx_target_pwrite(fd, buf, 0, 5000000, dev) == 0 &&
                file_size(fd) == 1001000,
            "count 0 writes nothing");


  // A write-only descriptor writes too.
  int wo = open(argv[1], O_WRONLY);
  n = ompx_target_pwrite(wo, buf, 4096, 1001000, dev);
  close(wo);
  OT_EXPECT(n == 4096 && file_size(fd) == 1005096 &&
                file_bad(fd, 1001000, 4096, 0, 0) == 0,
            "O_WRONLY descriptor writes and extends");

  omp_target_free(buf, dev);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: write: 300001 size: 300001
// CHECK: PASS: new file holds exactly the device data
// CHECK: write past end: 1000 size: 1001000
// CHECK: PASS: file extends exactly
// CHECK: PASS: the hole reads as zeros
// CHECK: PASS: data after the hole
// CHECK: PASS: overwrite keeps the size
// CHECK: PASS: overwrite changes exactly its range
// CHECK: PASS: count 0 writes nothing
// CHECK: PASS: O_WRONLY descriptor writes and extends
// CHECK-NOT: FAIL
// CHECK: failures: 0
