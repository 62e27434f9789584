// A write that reaches RLIMIT_FSIZE partway returns the bytes written
// before the limit, as pwrite(2) does, and fails with EFBIG only when it
// wrote nothing; the file holds exactly that prefix. With several workers
// and small chunks the result is the contiguous prefix from the request's
// start. SIGXFSZ is ignored (its default action ends the process). Device
// memory on every path that serves it here, and the initial device; Linux's
// own pwrite is the reference.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#define _GNU_SOURCE // strerrorname_np
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"
// clang-16's amdgcn device pass includes system headers before the first
// line, too early for the _GNU_SOURCE above, and still parses the host code.
#ifdef __AMDGCN__
const char *strerrorname_np(int errnum);
#endif

#define SIZE (1 << 20)
#define LIMIT 300001

static const char *name(int e) { return e ? strerrorname_np(e) : "0"; }

static unsigned char pat(size_t o) { return (unsigned char)(o * 7 + 3); }

// Whether the file is exactly pattern[0, size).
static int file_is(int fd, size_t size) {
  static unsigned char h[SIZE];
  ssize_t n = pread(fd, h, SIZE, 0);
  if (n != (ssize_t)size)
    return 0;
  for (size_t i = 0; i < size; ++i)
    if (h[i] != pat(i))
      return 0;
  return 1;
}

static void check(const char *where, int fd, void *buf, int dev) {
  if (ftruncate(fd, 0))
    return;
  errno = 0;
  ssize_t n = ompx_target_pwrite(fd, buf, SIZE, 0, dev);
  OT_EXPECT(n == LIMIT && file_is(fd, LIMIT),
            "%s: 1 MiB across the limit -> %zd %s", where, n,
            name(n < 0 ? errno : 0));
  errno = 0;
  n = ompx_target_pwrite(fd, (char *)buf + LIMIT - 1, 100, LIMIT - 1, dev);
  OT_EXPECT(n == 1 && file_is(fd, LIMIT), "%s: 100 bytes one before it -> %zd",
            where, n);
  errno = 0;
  n = ompx_target_pwrite(fd, buf, 4096, LIMIT, dev);
  OT_EXPECT(n == -1 && errno == EFBIG && file_is(fd, LIMIT),
            "%s: at the limit -> %zd %s", where, n, name(n < 0 ? errno : 0));
  ompx_io_request_t r;
  int rc = ompx_target_pwrite_async(fd, buf, SIZE, 0, dev, &r);
  n = rc ? -2 : ompx_io_wait(r);
  OT_EXPECT(n == LIMIT, "%s: async across the limit -> %zd", where, n);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  signal(SIGXFSZ, SIG_IGN);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(SIZE);
  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(SIZE, dev);
  if (fd < 0 || !h || !dbuf)
    return 3;
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = pat(i);
  if (omp_target_memcpy(dbuf, h, SIZE, 0, 0, dev, omp_get_initial_device()))
    return 4;
  struct rlimit rl = {LIMIT, LIMIT};
  if (setrlimit(RLIMIT_FSIZE, &rl))
    return 5;

  ssize_t n = pwrite(fd, h, SIZE, 0);
  printf("Linux: pwrite of 1 MiB with RLIMIT_FSIZE %d -> %zd\n", LIMIT, n);
  n = pwrite(fd, h, 4096, LIMIT);
  printf("Linux: pwrite at the limit -> %zd %s\n", n, name(n < 0 ? errno : 0));

  check("device", fd, dbuf, dev);
  check("host", fd, h, omp_get_initial_device());

  omp_target_free(dbuf, dev);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: Linux: pwrite of 1 MiB with RLIMIT_FSIZE 300001 -> 300001
// CHECK: Linux: pwrite at the limit -> -1 EFBIG
// CHECK: PASS: device: 1 MiB across the limit -> 300001 0
// CHECK: PASS: device: 100 bytes one before it -> 1
// CHECK: PASS: device: at the limit -> -1 EFBIG
// CHECK: PASS: device: async across the limit -> 300001
// CHECK: PASS: host: 1 MiB across the limit -> 300001 0
// CHECK: PASS: host: 100 bytes one before it -> 1
// CHECK: PASS: host: at the limit -> -1 EFBIG
// CHECK: PASS: host: async across the limit -> 300001
// CHECK-NOT: FAIL
// CHECK: failures: 0
