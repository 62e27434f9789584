// Requests never waited for: the program returns from main with reads,
// writes, a failing write (/dev/full) and a host request still in flight.
// Exit finishes them (the writes are all in the file afterwards, checked by
// a second run), releases them (no leak under LeakSanitizer), neither hangs
// nor crashes, and with OMPX_IO_INFO set counts them on stderr.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic submit %t.in %t.out 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: %libomptarget-run-generic verify %t.in %t.out | %fcheck-generic \
// RUN:   --check-prefix=VERIFY
// RUN: env OMPX_IO_INFO=1 OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic submit %t.in %t.out 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INFO
// RUN: %libomptarget-run-generic verify %t.in %t.out | %fcheck-generic \
// RUN:   --check-prefix=VERIFY
// RUN: %if lsan %{ %lsan-env %t submit %t.in %t.out 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET %}
// RUN: %if lsan %{ %lsan-env OMPX_IO_PATH=staged OMPX_IO_THREADS=1 \
// RUN:   %t submit %t.in %t.out 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET %}
// RUN: %libomptarget-run-generic verify %t.in %t.out | %fcheck-generic \
// RUN:   --check-prefix=VERIFY

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE (8 << 20)
#define PIECES 4

static int verify(const char *out) {
  int fd = open(out, O_RDONLY);
  unsigned char *h = malloc(SIZE);
  ssize_t n = fd < 0 ? -1 : pread(fd, h, SIZE, 0);
  size_t bad = 0;
  for (size_t i = 0; n == SIZE && i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 3);
  OT_EXPECT(n == SIZE && bad == 0,
            "writes never waited for are all in the file (%zd bytes, %zu bad)",
            n, bad);
  free(h);
  OT_SUMMARY();
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  if (!strcmp(argv[1], "verify"))
    return verify(argv[3]);
  setvbuf(stdout, NULL, _IONBF, 0);
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 3);
  int in = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int out = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int full = open("/dev/full", O_WRONLY);
  if (in < 0 || out < 0 || full < 0 || pwrite(in, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *src = omp_target_alloc(SIZE, dev);
  char *dst = omp_target_alloc(SIZE, dev);
  omp_target_memcpy(src, h, SIZE, 0, 0, dev, host);

  // One request waited for as usual, beside the others.
  ompx_io_request_t waited;
  int rc = ompx_target_pread_async(in, dst, 4096, 0, dev, &waited);
  OT_EXPECT(rc == 0 && ompx_io_wait(waited) == 4096, "one request waited");

  ompx_io_request_t req;
  for (int i = 0; i < PIECES; ++i) {
    size_t part = SIZE / PIECES;
    rc |= ompx_target_pread_async(in, dst + i * part, part, i * part, dev, &req);
    rc |= ompx_target_pwrite_async(out, src + i * part, part, i * part, dev,
                                   &req);
  }
  rc |= ompx_target_pwrite_async(full, src, 1 << 20, 0, dev, &req);
  rc |= ompx_target_pread_async(in, h, 100, 0, host, &req);
  OT_EXPECT(rc == 0, "%d requests submitted, none waited for",
            2 * PIECES + 2);

  // The device buffers stay allocated until the process ends: the requests
  // use them. Host requests are done at submission, so h may go.
  free(h);
  close(in);
  close(out);
  close(full);
  OT_SUMMARY();
  printf("returning from main\n");
  return 0;
}

// CHECK: PASS: one request waited
// CHECK: PASS: 10 requests submitted, none waited for
// CHECK: failures: 0
// CHECK: returning from main
// INFO: ompx-io[{{[0-9]+}}]: 10 request(s) never waited for: finishing and releasing them at exit
// QUIET-NOT: never waited for
// CHECK-NOT: LeakSanitizer
// CHECK-NOT: FAIL

// VERIFY: PASS: writes never waited for are all in the file (8388608 bytes, 0 bad)
// VERIFY: failures: 0
