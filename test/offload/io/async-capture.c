// Async transfers capture their arguments at submission and duplicate the
// descriptor: the caller changes its variables and closes the descriptor
// right after submitting, and the transfer still moves the right bytes.
// ompx_io_test answers 0 or 1 until the request is done, then ompx_io_wait
// gives the count.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=2 \
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

#define SIZE (4 << 20)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int wfd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (wfd < 0 || pwrite(wfd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(SIZE, dev);

  // Read: every argument variable changes right after the call, and the
  // descriptor is closed before the transfer could have finished.
  int fd = open(argv[1], O_RDONLY);
  char *ptr = dbuf + 1000;
  size_t count = SIZE - 3000;
  off_t offset = 2000;
  int device = dev;
  ompx_io_request_t req = NULL;
  int rc = ompx_target_pread_async(fd, ptr, count, offset, device, &req);
  close(fd);
  fd = -1;
  ptr = NULL;
  count = 7;
  offset = -1;
  device = -5;
  OT_EXPECT(rc == 0 && req != NULL, "async read submitted");
  int bad_test = 0, t;
  while ((t = ompx_io_test(req)) == 0)
    ;
  bad_test |= t != 1;
  OT_EXPECT(!bad_test, "ompx_io_test answered 0 until it answered 1");
  ssize_t n = ompx_io_wait(req);
  printf("async read: %zd\n", n);
  memset(h, 0, SIZE);
  omp_target_memcpy(h, dbuf + 1000, SIZE - 3000, 0, 0,
                    omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE - 3000; ++i)
    bad += h[i] != ot_pattern(2000 + i, 1);
  OT_EXPECT(n == SIZE - 3000 && bad == 0,
            "read used the captured arguments and the duplicated fd");

  // Write: the same, to a fresh descriptor closed at once.
  if (ftruncate(wfd, 0) != 0)
    return 4;
  fd = open(argv[1], O_WRONLY);
  ptr = dbuf;
  count = 1 << 20;
  offset = 123;
  rc = ompx_target_pwrite_async(fd, ptr, count, offset, dev, &req);
  close(fd);
  ptr = dbuf + 5;
  count = 0;
  offset = 99999999;
  OT_EXPECT(rc == 0 && req != NULL, "async write submitted");
  while ((t = ompx_io_test(req)) == 0)
    ;
  OT_EXPECT(t == 1, "ompx_io_test answered 1");
  n = ompx_io_wait(req);
  printf("async write: %zd\n", n);
  struct stat st;
  fstat(wfd, &st);
  unsigned char *back = malloc(1 << 20);
  omp_target_memcpy(h, dbuf, 1 << 20, 0, 0, omp_get_initial_device(), dev);
  OT_EXPECT(n == 1 << 20 && st.st_size == 123 + (1 << 20) &&
                pread(wfd, back, 1 << 20, 123) == 1 << 20 &&
                memcmp(back, h, 1 << 20) == 0,
            "write used the captured arguments and the duplicated fd");

  // The descriptor numbers given back by close() may be reused by the next
  // open while a request still holds its duplicate: no interference.
  int fds[4];
  ompx_io_request_t reqs[4];
  for (int i = 0; i < 4; ++i) {
    fds[i] = open(argv[1], O_RDONLY);
    rc |= ompx_target_pread_async(fds[i], dbuf + i * 4096, 4096, i * 4096,
                                  dev, &reqs[i]);
    close(fds[i]);
  }
  OT_EXPECT(rc == 0, "four async reads on reused descriptor numbers");
  ssize_t total = 0;
  for (int i = 0; i < 4; ++i)
    total += ompx_io_wait(reqs[i]);
  OT_EXPECT(total == 4 * 4096, "all four completed");

  omp_target_free(dbuf, dev);
  close(wfd);
  free(h);
  free(back);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: async read submitted
// CHECK: PASS: ompx_io_test answered 0 until it answered 1
// CHECK: async read: 4191304
// CHECK: PASS: read used the captured arguments and the duplicated fd
// CHECK: PASS: async write submitted
// CHECK: PASS: ompx_io_test answered 1
// CHECK: async write: 1048576
// CHECK: PASS: write used the captured arguments and the duplicated fd
// CHECK: PASS: four async reads on reused descriptor numbers
// CHECK: PASS: all four completed
// CHECK-NOT: FAIL
// CHECK: failures: 0
