// The text ompx_io_last_error returned stays valid, at the same address,
// until the thread's next failed call: depend calls that succeed, and the
// library code that their tasks run on the program's threads (a transfer
// or batch of host memory done in the task, a submission the task makes,
// a failure that goes to the task's error), leave it alone (issue 27: a
// successful ompx_io_batch_submit_depend freed it). Under ASan, reading
// the old text would report a use after free.
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io_depend.h"

#define BYTES 4096

/// The text ompx_io_last_error returned after the failed call, and a copy.
static const char *text;
static char copy[1024];
/// Checks after which the text was elsewhere, or different.
static int moved;

/// Whether ompx_io_last_error still returns text, unchanged. After every
/// call: a string reassigned twice may come back to the same address.
static void check(void) {
  int same_text = strcmp(text, copy) == 0;
#pragma omp atomic
  moved += ompx_io_last_error() != text || !same_text;
}

/// Depend calls on device dev that all succeed, and one whose task fails
/// (its error goes to *error), on disjoint parts of buf (4 * BYTES) and of
/// the file; taskwait. The number of calls refused, or whose task failed
/// otherwise.
static int depend_calls(int fd, int dev, char *buf) {
  ssize_t r[3], failed = -2;
  int e[3], refused = 0;
  ompx_io_op_t ops[2] = {
      {OMPX_IO_OP_READ, fd, buf + 2 * BYTES, BYTES, 0, dev, -2, -2},
      {OMPX_IO_OP_WRITE, fd, buf + 3 * BYTES, BYTES, 3 * BYTES, dev, -2, -2},
  };
  refused += ompx_target_pread_depend(fd, buf, BYTES, 0, dev, &r[0], &e[0], 0,
                                      NULL) != 0;
  check();
  refused += ompx_target_pwrite_depend(fd, buf + BYTES, BYTES, 2 * BYTES, dev,
                                       &r[1], &e[1], 0, NULL) != 0;
  check();
  refused += ompx_io_batch_submit_depend(ops, 2, &failed, 0, NULL) != 0;
  check();
  refused += ompx_target_pread_depend(fd, buf, BYTES, -1, dev, &r[2], &e[2],
                                      0, NULL) != 0;
  check();
#pragma omp taskwait
  check();
  return refused + (e[0] != 0) + (e[1] != 0) + (failed != 0) +
         (e[2] != EINVAL);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = ot_open_zeros(argv[1]);
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  char *d = omp_target_alloc(4 * BYTES, dev);
  char *h = calloc(4, BYTES);

  // A failure whose message is longer than any string kept in place.
  OT_EXPECT(ompx_io_wait((ompx_io_request_t)424242) == -1, "a failed call");
  text = ompx_io_last_error();
  snprintf(copy, sizeof copy, "%s", text);
  printf("%s\n", text);

  int refused = depend_calls(fd, host, h) + depend_calls(fd, dev, d);
  // This thread creates the tasks; the others may run them.
#pragma omp parallel num_threads(3)
#pragma omp masked
  refused += depend_calls(fd, host, h) + depend_calls(fd, dev, d);
  OT_EXPECT(refused == 0, "depend calls: all accepted, one failure each");

  OT_EXPECT(moved == 0, "the text stayed where it was, unchanged (%d moves)",
            moved);

  omp_target_free(d, dev);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: a failed call
// CHECK-NEXT: ompx_io_wait: request 0x{{[0-9a-f]+}} is not in flight
// CHECK: PASS: depend calls: all accepted, one failure each
// CHECK: PASS: the text stayed where it was, unchanged (0 moves)
// CHECK-NOT: FAIL
// CHECK: failures: 0
