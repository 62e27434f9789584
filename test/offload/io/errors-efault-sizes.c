// EFAULT against the size the program asked for, not the block behind it:
// the small-allocation cache hands out power-of-two blocks (128 bytes for
// omp_target_alloc(100), 16 for omp_target_alloc(1)), and keeps freed
// blocks of up to 8 KiB for reuse; neither the slack of a block nor a
// freed block is a valid buffer. Freed large allocations are refused too.
// The same holds with the cache disabled.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD=0 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
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
  char data[16384];
  memset(data, 'x', sizeof data);
  if (fd < 0 || write(fd, data, sizeof data) != sizeof data)
    return 3;
  int dev = omp_get_default_device();
  ompx_io_request_t req = NULL;

  char *a = omp_target_alloc(100, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, a, 128, 0, dev), EFAULT,
               "alloc(100): read of 128");
  EXPECT_ERRNO(ompx_target_pread(fd, a, 101, 0, dev), EFAULT,
               "alloc(100): read of 101");
  EXPECT_ERRNO(ompx_target_pwrite(fd, a + 99, 2, 0, dev), EFAULT,
               "alloc(100): write of 2 at byte 99");
  EXPECT_ERRNO(ompx_target_pread(fd, a + 100, 1, 0, dev), EFAULT,
               "alloc(100): read of 1 at byte 100");
  EXPECT_ERRNO(ompx_target_pread_async(fd, a, 128, 0, dev, &req), EFAULT,
               "alloc(100): async read of 128");
  OT_EXPECT(req == NULL, "request stays NULL");
  OT_EXPECT(ompx_target_pread(fd, a, 100, 0, dev) == 100,
            "alloc(100): read of 100 works");
  OT_EXPECT(ompx_target_pread(fd, a + 99, 1, 0, dev) == 1,
            "alloc(100): read of 1 at byte 99 works");

  char *b = omp_target_alloc(1, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, b, 16, 0, dev), EFAULT,
               "alloc(1): read of 16");
  EXPECT_ERRNO(ompx_target_pread(fd, b, 2, 0, dev), EFAULT,
               "alloc(1): read of 2");
  OT_EXPECT(ompx_target_pread(fd, b, 1, 0, dev) == 1,
            "alloc(1): read of 1 works");

  char *c = omp_target_alloc(5000, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, c, 5001, 0, dev), EFAULT,
               "alloc(5000): read of 5001");
  EXPECT_ERRNO(ompx_target_pread(fd, c, 8192, 0, dev), EFAULT,
               "alloc(5000): read of 8192");

  // Freed small blocks stay in the cache for reuse: still refused.
  char *f = omp_target_alloc(8192, dev);
  omp_target_free(f, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, f, 64, 0, dev), EFAULT,
               "freed 8192: read");
  EXPECT_ERRNO(ompx_target_pwrite(fd, f, 64, 0, dev), EFAULT,
               "freed 8192: write");
  EXPECT_ERRNO(ompx_target_pread(fd, f + 100, 64, 0, dev), EFAULT,
               "freed 8192: read inside");
  EXPECT_ERRNO(ompx_target_pread_async(fd, f, 64, 0, dev, &req), EFAULT,
               "freed 8192: async read");
  OT_EXPECT(req == NULL, "request stays NULL");
  char *g = omp_target_alloc(16, dev);
  omp_target_free(g, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, g, 1, 0, dev), EFAULT, "freed 16: read");

  char *big = omp_target_alloc(1 << 20, dev);
  omp_target_free(big, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, big, 64, 0, dev), EFAULT,
               "freed 1 MiB: read");

  // Allocated again, a block is a buffer again, of its new size.
  char *f2 = omp_target_alloc(8000, dev);
  OT_EXPECT(ompx_target_pread(fd, f2, 8000, 0, dev) == 8000,
            "alloc(8000) after the free: read of 8000 works");
  EXPECT_ERRNO(ompx_target_pread(fd, f2, 8001, 0, dev), EFAULT,
               "alloc(8000) after the free: read of 8001");

  omp_target_free(f2, dev);
  omp_target_free(c, dev);
  omp_target_free(b, dev);
  omp_target_free(a, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: alloc(100): read of 128 -> -1 EFAULT
// CHECK: PASS: alloc(100): read of 101 -> -1 EFAULT
// CHECK: PASS: alloc(100): write of 2 at byte 99 -> -1 EFAULT
// CHECK: PASS: alloc(100): read of 1 at byte 100 -> -1 EFAULT
// CHECK: PASS: alloc(100): async read of 128 -> -1 EFAULT
// CHECK: PASS: request stays NULL
// CHECK: PASS: alloc(100): read of 100 works
// CHECK: PASS: alloc(100): read of 1 at byte 99 works
// CHECK: PASS: alloc(1): read of 16 -> -1 EFAULT
// CHECK: PASS: alloc(1): read of 2 -> -1 EFAULT
// CHECK: PASS: alloc(1): read of 1 works
// CHECK: PASS: alloc(5000): read of 5001 -> -1 EFAULT
// CHECK: PASS: alloc(5000): read of 8192 -> -1 EFAULT
// CHECK: PASS: freed 8192: read -> -1 EFAULT
// CHECK: PASS: freed 8192: write -> -1 EFAULT
// CHECK: PASS: freed 8192: read inside -> -1 EFAULT
// CHECK: PASS: freed 8192: async read -> -1 EFAULT
// CHECK: PASS: request stays NULL
// CHECK: PASS: freed 16: read -> -1 EFAULT
// CHECK: PASS: freed 1 MiB: read -> -1 EFAULT
// CHECK: PASS: alloc(8000) after the free: read of 8000 works
// CHECK: PASS: alloc(8000) after the free: read of 8001 -> -1 EFAULT
// CHECK-NOT: FAIL
// CHECK: failures: 0
