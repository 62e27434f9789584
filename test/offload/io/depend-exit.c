// A program that returns from main with depend tasks not yet started: a
// chain of 200 writes ordered by one depend object, then a chain of batch
// tasks behind them, no taskwait. Exit runs them before libomp and the
// library shut down: the program exits 0 and every byte is in the file
// (issue 27: it died with SIGSEGV in exit, the file empty). The first run
// writes, on the device and then on the initial device (host memory); a
// second run of the program reads the file back.
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat device 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=WRITE
// RUN: %libomptarget-run-generic %t.dat check | %fcheck-generic
// RUN: %libomptarget-run-generic %t.dat host 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET
// RUN: %libomptarget-run-generic %t.dat check | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io_depend.h"

#define LINKS 200
#define BATCHES 4
#define OPS 8
#define BYTES 4096
#define TOTAL ((LINKS + BATCHES * OPS) * BYTES)

static unsigned char pattern(size_t i) { return (unsigned char)(i / 97 + i); }

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (!strcmp(argv[2], "check")) {
    int fd = open(argv[1], O_RDONLY);
    unsigned char *h = malloc(TOTAL);
    ssize_t n = pread(fd, h, TOTAL, 0);
    long bad = 0;
    for (ssize_t i = 0; i < n; ++i)
      bad += h[i] != pattern((size_t)i);
    OT_EXPECT(n == TOTAL && bad == 0, "file complete: %zd of %d bytes, %ld bad",
              n, TOTAL, bad);
    free(h);
    close(fd);
    OT_SUMMARY();
    return 0;
  }

  int dev = !strcmp(argv[2], "host") ? omp_get_initial_device()
                                     : omp_get_default_device();
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(TOTAL);
  for (size_t i = 0; i < TOTAL; ++i)
    h[i] = pattern(i);
  unsigned char *d = omp_target_alloc(TOTAL, dev);
  omp_target_memcpy(d, h, TOTAL, 0, 0, dev, omp_get_initial_device());
  free(h);

  omp_depend_t o;
#pragma omp depobj(o) depend(inout: d[0])
  int refused = 0;
  for (int k = 0; k < LINKS; ++k)
    refused += ompx_target_pwrite_depend(fd, d + (size_t)k * BYTES, BYTES,
                                         (off_t)k * BYTES, dev, NULL, NULL, 1,
                                         &o) != 0;
  // Valid until the tasks complete: static.
  static ompx_io_op_t ops[BATCHES][OPS];
  for (int b = 0; b < BATCHES; ++b) {
    for (int k = 0; k < OPS; ++k) {
      size_t off = (size_t)(LINKS + b * OPS + k) * BYTES;
      ompx_io_op_t op = {OMPX_IO_OP_WRITE, fd, d + off, BYTES, (off_t)off,
                         dev, -2, -2};
      ops[b][k] = op;
    }
    refused += ompx_io_batch_submit_depend(ops[b], OPS, NULL, 1, &o) != 0;
  }
  printf("%d calls refused; returning from main\n", refused);
  return 0;
}

// WRITE: 0 calls refused; returning from main
// WRITE: ompx-io[{{[0-9]+}}]: {{[0-9]+}} OpenMP-depend task(s) not complete at exit: finishing them
// WRITE-NOT: never started
// QUIET: 0 calls refused; returning from main
// QUIET-NOT: ompx-io
// CHECK: PASS: file complete: 950272 of 950272 bytes, 0 bad
// CHECK: failures: 0
