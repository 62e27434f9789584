// Staging buffers within the pinned budget (issue 27): with
// OMPX_IO_CHUNK_SIZE=1G, OMPX_IO_RING_DEPTH=64 and OMPX_IO_THREADS=256
// (each valid) a staged transfer pins what it moves, not a 1 GiB chunk per
// ring buffer, so a 16 MiB read leaves room for the 5 MiB write after it;
// the buffers idle workers keep go back when a later transfer needs the
// memory; and a budget below one chunk moves it in pieces. Every transfer
// succeeds with exact data, and the budget's peak stays within its cap.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=1G OMPX_IO_RING_DEPTH=64 \
// RUN:   OMPX_IO_THREADS=256 OFFLOADIO_PINNED_MAX=48M \
// RUN:   %libomptarget-run-generic %t.dat 48 | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=1G OMPX_IO_RING_DEPTH=64 \
// RUN:   OMPX_IO_THREADS=256 OFFLOADIO_PINNED_MAX=4M \
// RUN:   %libomptarget-run-generic %t.dat 4 | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K OMPX_IO_RING_DEPTH=64 \
// RUN:   OMPX_IO_THREADS=64 OFFLOADIO_PINNED_MAX=2M \
// RUN:   %libomptarget-run-generic %t.dat 2 | %fcheck-generic

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

#define MIB ((size_t)1 << 20)
#define FILE_SIZE (64 * MIB)
#define ASYNC 4

// Read count bytes at off into dbuf and check them against the file.
static void check_read(int fd, char *dbuf, int dev, size_t count, size_t off,
                       const char *what) {
  errno = 0;
  ssize_t n = ompx_target_pread(fd, dbuf, count, (off_t)off, dev);
  size_t bad = n == (ssize_t)count
                   ? ot_device_mismatches(dbuf, dev, count, off, 1)
                   : count;
  OT_EXPECT(n == (ssize_t)count && bad == 0, "%s (%zd, errno %d, %zu wrong)",
            what, n, n < 0 ? errno : 0, bad);
}

// Write count pattern bytes (seed 2) from dbuf past the end of the read
// data, at FILE_SIZE + off, and check the file.
static void check_write(int fd, char *dbuf, int dev, size_t count, size_t off,
                        const char *what) {
  unsigned char *bytes = malloc(count);
  for (size_t i = 0; i < count; ++i)
    bytes[i] = ot_pattern(off + i, 2);
  omp_target_memcpy(dbuf, bytes, count, 0, 0, dev, omp_get_initial_device());
  errno = 0;
  ssize_t n = ompx_target_pwrite(fd, dbuf, count, (off_t)(FILE_SIZE + off),
                                 dev);
  memset(bytes, 0, count);
  size_t bad = pread(fd, bytes, count, (off_t)(FILE_SIZE + off)) ==
                       (ssize_t)count
                   ? 0
                   : count;
  for (size_t i = 0; !bad && i < count; ++i)
    bad += bytes[i] != ot_pattern(off + i, 2);
  free(bytes);
  OT_EXPECT(n == (ssize_t)count && bad == 0, "%s (%zd, errno %d, %zu wrong)",
            what, n, n < 0 ? errno : 0, bad);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  uint64_t cap = (uint64_t)atoi(argv[2]) * MIB;
  unsigned char *host = malloc(FILE_SIZE);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    host[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, host, FILE_SIZE, 0) != (ssize_t)FILE_SIZE)
    return 3;
  free(host);
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(FILE_SIZE, dev);
  OT_EXPECT(dbuf != NULL, "device buffer");

  check_read(fd, dbuf, dev, 16 * MIB, 0, "16 MiB read");
  check_write(fd, dbuf, dev, 5 * MIB, 16 * MIB, "5 MiB write after it");
  check_read(fd, dbuf, dev, 40 * MIB, 3 * MIB + 1000,
             "40 MiB read, more than idle workers leave");
  check_write(fd, dbuf, dev, 24 * MIB + 12345, 7, "24 MiB write");

  // Reads in flight together, each wanting its own buffers.
  ompx_io_request_t req[ASYNC];
  int submitted = 0;
  for (int i = 0; i < ASYNC; ++i)
    submitted += ompx_target_pread_async(fd, dbuf + i * 16 * MIB, 16 * MIB,
                                         (off_t)(i * 16 * MIB), dev,
                                         &req[i]) == 0;
  OT_EXPECT(submitted == ASYNC, "%d async reads submitted", ASYNC);
  int done = 0;
  for (int i = 0; i < submitted; ++i)
    done += ompx_io_wait(req[i]) == (ssize_t)(16 * MIB);
  OT_EXPECT(done == ASYNC &&
                ot_device_mismatches(dbuf, dev, FILE_SIZE, 0, 1) == 0,
            "%d async reads of 16 MiB exact", done);

  ompx_pinned_budget_t b;
  OT_EXPECT(ompx_io_get_pinned_budget(&b) == 0 && b.cap == cap &&
                b.peak <= b.cap,
            "peak within the cap");

  omp_target_free(dbuf, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device buffer
// CHECK: PASS: 16 MiB read
// CHECK: PASS: 5 MiB write after it
// CHECK: PASS: 40 MiB read, more than idle workers leave
// CHECK: PASS: 24 MiB write
// CHECK: PASS: 4 async reads submitted
// CHECK: PASS: 4 async reads of 16 MiB exact
// CHECK: PASS: peak within the cap
// CHECK-NOT: FAIL
// CHECK: failures: 0
