// A request waited for twice is refused, never used after it was released:
// the second ompx_io_wait, and ompx_io_test after the first, return -1 with
// EINVAL, for device and host requests, also after newer requests were
// submitted (a stale handle names no newer request) and when two threads
// wait for the same request at once (one gets the count, the other
// EINVAL). A handle no submission returned is refused the same way. With
// OMPX_IO_INFO or OFFLOADIO_INFO set, each refusal prints a line; without
// them (LIBOMPTARGET_INFO is the stock plugins' setting) nothing is
// printed. Run under LeakSanitizer where available.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic -pthread
// RUN: %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: env OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INFO
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INFO
// RUN: env LIBOMPTARGET_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: %if lsan %{ %lsan-env %t %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET %}

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

#define SIZE (1 << 20)

static ompx_io_request_t shared_req;
static ssize_t results[2];
static int errnos[2];

static void *waiter(void *arg) {
  int i = (int)(intptr_t)arg;
  results[i] = ompx_io_wait(shared_req);
  errnos[i] = results[i] < 0 ? errno : 0;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  // Unbuffered, so that stderr lines of the library stay in order with
  // ours.
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char *h = malloc(SIZE);
  memset(h, 7, SIZE);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *dbuf = omp_target_alloc(SIZE, dev);

  // Device request.
  ompx_io_request_t req = NULL;
  int rc = ompx_target_pread_async(fd, dbuf, SIZE, 0, dev, &req);
  OT_EXPECT(rc == 0 && req != NULL, "device read submitted");
  OT_EXPECT(ompx_io_wait(req) == SIZE, "first wait gives the count");
  printf("second wait on a device request\n");
  EXPECT_ERRNO(ompx_io_wait(req), EINVAL, "second wait: -1 EINVAL");
  printf("test after wait on a device request\n");
  EXPECT_ERRNO(ompx_io_test(req), EINVAL, "test after wait: -1 EINVAL");

  // Host request (initial device): done at submission, released the same.
  rc = ompx_target_pread_async(fd, h, 100, 0, host, &req);
  OT_EXPECT(rc == 0 && ompx_io_wait(req) == 100, "host request waited");
  printf("second wait on a host request\n");
  EXPECT_ERRNO(ompx_io_wait(req), EINVAL, "host: second wait -1 EINVAL");

  // A stale handle after newer submissions names none of them.
  ompx_io_request_t old = NULL, newer[3];
  rc = ompx_target_pread_async(fd, dbuf, 4096, 0, dev, &old);
  rc |= ompx_io_wait(old) != 4096;
  for (int i = 0; i < 3; ++i)
    rc |= ompx_target_pread_async(fd, dbuf + i * 8192, 8192, i * 8192, dev,
                                  &newer[i]);
  printf("stale handle\n");
  EXPECT_ERRNO(ompx_io_wait(old), EINVAL, "stale handle: -1 EINVAL");
  ssize_t total = 0;
  for (int i = 0; i < 3; ++i)
    total += ompx_io_wait(newer[i]);
  OT_EXPECT(rc == 0 && total == 3 * 8192,
            "newer requests untouched by the stale handle");

  // Two threads wait for one request at once.
  rc = ompx_target_pread_async(fd, dbuf, SIZE, 0, dev, &shared_req);
  pthread_t t[2];
  for (int i = 0; i < 2; ++i)
    pthread_create(&t[i], NULL, waiter, (void *)(intptr_t)i);
  for (int i = 0; i < 2; ++i)
    pthread_join(t[i], NULL);
  int one_count = (results[0] == SIZE) + (results[1] == SIZE);
  int one_einval = (results[0] == -1 && errnos[0] == EINVAL) +
                   (results[1] == -1 && errnos[1] == EINVAL);
  OT_EXPECT(rc == 0 && one_count == 1 && one_einval == 1,
            "concurrent waits: one count, one EINVAL");

  // A handle that no submission returned.
  int local;
  printf("foreign handle\n");
  EXPECT_ERRNO(ompx_io_wait((ompx_io_request_t)&local), EINVAL,
               "foreign handle: -1 EINVAL");
  EXPECT_ERRNO(ompx_io_test((ompx_io_request_t)&local), EINVAL,
               "foreign handle: test -1 EINVAL");
  EXPECT_ERRNO(ompx_io_wait(NULL), EINVAL, "NULL: -1 EINVAL");

  // The library still works.
  OT_EXPECT(ompx_target_pread(fd, dbuf, SIZE, 0, dev) == SIZE,
            "later reads work");

  omp_target_free(dbuf, dev);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device read submitted
// CHECK: PASS: first wait gives the count
// CHECK: second wait on a device request
// INFO-NEXT: ompx-io[{{[0-9]+}}]: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight (already waited for, or not returned by a submission)
// QUIET-NOT: not in flight
// CHECK: PASS: second wait: -1 EINVAL
// CHECK: test after wait on a device request
// INFO-NEXT: ompx-io[{{[0-9]+}}]: ompx_io_test: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: test after wait: -1 EINVAL
// CHECK: PASS: host request waited
// CHECK: second wait on a host request
// INFO-NEXT: ompx-io[{{[0-9]+}}]: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: host: second wait -1 EINVAL
// CHECK: stale handle
// INFO-NEXT: ompx-io[{{[0-9]+}}]: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: stale handle: -1 EINVAL
// CHECK: PASS: newer requests untouched by the stale handle
// INFO: ompx-io[{{[0-9]+}}]: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: concurrent waits: one count, one EINVAL
// CHECK: foreign handle
// INFO-NEXT: ompx-io[{{[0-9]+}}]: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: foreign handle: -1 EINVAL
// INFO: ompx-io[{{[0-9]+}}]: ompx_io_test: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: foreign handle: test -1 EINVAL
// CHECK: PASS: NULL: -1 EINVAL
// CHECK: PASS: later reads work
// QUIET-NOT: not in flight
// CHECK-NOT: FAIL
// CHECK: failures: 0
