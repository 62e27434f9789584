// OMPX_IO_PATH forces the path of every transfer on the host plugin: the
// same program reads and writes under auto, direct, staged and fastpath.
// direct and staged move the exact data and count it on that path; auto
// picks direct here; fastpath cannot serve the host plugin, so every
// transfer fails with ENOTSUP at submission (async requests stay NULL) and
// nothing is counted. The initial device ignores the setting.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env -u OMPX_IO_PATH %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OK,DIRECT
// RUN: env OMPX_IO_PATH=auto %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OK,DIRECT
// RUN: env OMPX_IO_PATH=direct %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OK,DIRECT
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OK,STAGED
// RUN: env OMPX_IO_PATH=Staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OK,STAGED
// RUN: env OMPX_IO_PATH=fastpath %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,FAST

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

#define SIZE (3 << 20)

static const char *ename(int e) {
  return e == 0 ? "0" : e == ENOTSUP ? "ENOTSUP" : strerror(e);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(SIZE, dev);
  ompx_io_stats_t s0, s1;
  ompx_io_get_stats(dev, &s0);

  errno = 0;
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
  printf("read: %zd %s\n", n, n < 0 ? ename(errno) : "");
  memset(h, 0, SIZE);
  omp_target_memcpy(h, dbuf, SIZE, 0, 0, omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  if (n == SIZE)
    OT_EXPECT(bad == 0, "read data exact");

  errno = 0;
  n = ompx_target_pwrite(fd, dbuf, SIZE, SIZE, dev);
  printf("write: %zd %s\n", n, n < 0 ? ename(errno) : "");
  if (n == SIZE) {
    memset(h, 0, SIZE);
    bad = pread(fd, h, SIZE, SIZE) != SIZE;
    for (size_t i = 0; i < SIZE; ++i)
      bad += h[i] != ot_pattern(i, 1);
    OT_EXPECT(bad == 0, "written data exact");
  }

  ompx_io_request_t req = NULL;
  errno = 0;
  int rc = ompx_target_pread_async(fd, dbuf, 4096, 0, dev, &req);
  printf("async: %d %s request %s\n", rc, rc ? ename(errno) : "",
         req ? "set" : "NULL");
  if (req)
    printf("async wait: %zd\n", ompx_io_wait(req));

  ompx_io_get_stats(dev, &s1);
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    printf("%s: read %llu written %llu reads %llu writes %llu\n",
           ompx_io_path_name(p),
           (unsigned long long)(s1.bytes_read[p] - s0.bytes_read[p]),
           (unsigned long long)(s1.bytes_written[p] - s0.bytes_written[p]),
           (unsigned long long)(s1.reads[p] - s0.reads[p]),
           (unsigned long long)(s1.writes[p] - s0.writes[p]));

  // Host memory is not affected by OMPX_IO_PATH.
  n = ompx_target_pread(fd, h, SIZE, 0, omp_get_initial_device());
  printf("initial device read: %zd\n", n);

  omp_target_free(dbuf, dev);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// OK: read: 3145728
// OK-NEXT: PASS: read data exact
// OK-NEXT: write: 3145728
// OK-NEXT: PASS: written data exact
// OK-NEXT: async: 0  request set
// OK-NEXT: async wait: 4096
// FAST: read: -1 ENOTSUP
// FAST-NEXT: write: -1 ENOTSUP
// FAST-NEXT: async: -1 ENOTSUP request NULL
// DIRECT-NEXT: direct: read 3149824 written 3145728 reads 2 writes 1
// DIRECT-NEXT: fastpath: read 0 written 0 reads 0 writes 0
// DIRECT-NEXT: staged: read 0 written 0 reads 0 writes 0
// STAGED-NEXT: direct: read 0 written 0 reads 0 writes 0
// STAGED-NEXT: fastpath: read 0 written 0 reads 0 writes 0
// STAGED-NEXT: staged: read 3149824 written 3145728 reads 2 writes 1
// FAST-NEXT: direct: read 0 written 0 reads 0 writes 0
// FAST-NEXT: fastpath: read 0 written 0 reads 0 writes 0
// FAST-NEXT: staged: read 0 written 0 reads 0 writes 0
// CHECK-NEXT: host: read 0 written 0 reads 0 writes 0
// CHECK-NEXT: initial device read: 3145728
// CHECK-NEXT: failures: 0
