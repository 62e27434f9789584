// A read across end of file returns the short count and writes nothing past
// it: the rest of the device buffer keeps its old contents. A read at or past
// end of file returns 0 and writes nothing. Small chunks put the end of file
// inside a middle chunk with whole chunks after it.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define FILE_SIZE 300007
#define BUF_SIZE (1 << 20)
#define OLD 0xAB

static unsigned char host[FILE_SIZE];

static void fill_old(void *dbuf, int dev) {
  ot_device_fill(dbuf, dev, BUF_SIZE, OLD);
}

// Bytes of the device buffer that are not the file's at foff in [0, n) and
// not OLD in [n, BUF_SIZE).
static size_t bad_bytes(void *dbuf, int dev, size_t n, size_t foff) {
  return ot_device_read_mismatches(dbuf, dev, BUF_SIZE, n, foff, 1, OLD);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    host[i] = ot_pattern(i, 1);
  if (fd < 0 || pwrite(fd, host, FILE_SIZE, 0) != FILE_SIZE)
    return 3;

  int dev = omp_get_default_device();
  void *buf = omp_target_alloc(BUF_SIZE, dev);

  fill_old(buf, dev);
  ssize_t n = ompx_target_pread(fd, buf, BUF_SIZE, 0, dev);
  printf("from 0: %zd\n", n);
  OT_EXPECT(n == FILE_SIZE && bad_bytes(buf, dev, FILE_SIZE, 0) == 0,
            "short count at end of file, tail keeps old contents");

  fill_old(buf, dev);
  n = ompx_target_pread(fd, buf, 50000, FILE_SIZE - 10000, dev);
  printf("across: %zd\n", n);
  OT_EXPECT(n == 10000 && bad_bytes(buf, dev, 10000, FILE_SIZE - 10000) == 0,
            "read across end of file");

  fill_old(buf, dev);
  n = ompx_target_pread(fd, buf, BUF_SIZE, FILE_SIZE, dev);
  printf("at eof: %zd\n", n);
  OT_EXPECT(n == 0 && bad_bytes(buf, dev, 0, 0) == 0,
            "read at end of file returns 0, buffer untouched");

  n = ompx_target_pread(fd, buf, 4096, (off_t)1 << 40, dev);
  printf("past eof: %zd\n", n);
  OT_EXPECT(n == 0 && bad_bytes(buf, dev, 0, 0) == 0,
            "read far past end of file returns 0, buffer untouched");

  // The file shrinks between two reads: the second sees the new end.
  if (ftruncate(fd, 70000) != 0)
    return 4;
  fill_old(buf, dev);
  n = ompx_target_pread(fd, buf, BUF_SIZE, 1000, dev);
  printf("after truncate: %zd\n", n);
  OT_EXPECT(n == 69000 && bad_bytes(buf, dev, 69000, 1000) == 0,
            "read after ftruncate stops at the new end of file");

  // An empty file.
  if (ftruncate(fd, 0) != 0)
    return 5;
  fill_old(buf, dev);
  n = ompx_target_pread(fd, buf, BUF_SIZE, 0, dev);
  printf("empty: %zd\n", n);
  OT_EXPECT(n == 0 && bad_bytes(buf, dev, 0, 0) == 0, "empty file reads 0");

  // The same for an async read.
  ompx_io_request_t req = NULL;
  OT_EXPECT(ompx_target_pread_async(fd, buf, BUF_SIZE, 0, dev, &req) == 0 &&
                req != NULL,
            "async read of an empty file submitted");
  OT_EXPECT(ompx_io_wait(req) == 0, "async read of an empty file returns 0");

  omp_target_free(buf, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: from 0: 300007
// CHECK: PASS: short count at end of file, tail keeps old contents
// CHECK: across: 10000
// CHECK: PASS: read across end of file
// CHECK: at eof: 0
// CHECK: PASS: read at end of file returns 0, buffer untouched
// CHECK: past eof: 0
// CHECK: PASS: read far past end of file returns 0, buffer untouched
// CHECK: after truncate: 69000
// CHECK: PASS: read after ftruncate stops at the new end of file
// CHECK: empty: 0
// CHECK: PASS: empty file reads 0
// CHECK: PASS: async read of an empty file submitted
// CHECK: PASS: async read of an empty file returns 0
// CHECK-NOT: FAIL
// CHECK: failures: 0
