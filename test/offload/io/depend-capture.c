// The depend calls capture the file at the call, as the async calls do at
// submission: a task that has not started yet when the program closes the
// descriptor, and another open takes its number, still transfers from and
// to the file the descriptor named at the call (issue 27: it read the
// other file). A detached task of the program's own keeps the depend tasks
// from starting until the program fulfills it. A read, a write and a batch,
// on the device and on the initial device. A batch operation whose
// descriptor is not open at the call fails with EBADF, even when the number
// names a file by the time the task runs.
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

static const char *base;

/// A new file filled with byte c (none when c is 0); its descriptor.
static int make_file(const char *what, char c) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%s", base, what);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unlink(path);
  char buf[BYTES];
  memset(buf, c, sizeof buf);
  if (fd >= 0 && c && pwrite(fd, buf, sizeof buf, 0) != sizeof buf)
    return -1;
  return fd;
}

/// Whether the first BYTES bytes of file fd (with fd -1: of memory d of
/// device dev) are all c.
static int all(int dev, const char *d, int fd, char c) {
  char h[BYTES];
  if (fd >= 0) {
    if (pread(fd, h, BYTES, 0) != BYTES)
      return 0;
  } else {
    omp_target_memcpy(h, d, BYTES, 0, 0, omp_get_initial_device(), dev);
  }
  for (int i = 0; i < BYTES; ++i)
    if (h[i] != c)
      return 0;
  return 1;
}

static void round_trip(int dev, const char *label) {
  char *d = omp_target_alloc(4 * BYTES, dev);
  char ones[BYTES];
  memset(ones, 'w', sizeof ones);
  omp_target_memcpy(d + BYTES, ones, BYTES, 0, 0, dev,
                    omp_get_initial_device());

  int src = make_file("src", 'a');   // read by the depend read
  int dst = make_file("dst", 0);     // written by the depend write
  int bsrc = make_file("bsrc", 'b'); // read by the batch

  omp_event_handle_t gate;
  int token = 0;
#pragma omp task detach(gate) depend(out: token)
  {}
  omp_depend_t after;
#pragma omp depobj(after) depend(in: token)
  ssize_t rr = -2, wr = -2, failed = -2;
  int re = -2, we = -2;
  int made =
      (ompx_target_pread_depend(src, d, BYTES, 0, dev, &rr, &re, 1, &after) ==
       0) +
      (ompx_target_pwrite_depend(dst, d + BYTES, BYTES, 0, dev, &wr, &we, 1,
                                 &after) == 0);
  // Not open at the call: its operation fails. First, so that no duplicate
  // the call makes takes its number before it is looked at.
  int gone = make_file("gone", 0);
  close(gone);
  ompx_io_op_t ops[3] = {
      {OMPX_IO_OP_READ, gone, d + 3 * BYTES, BYTES, 0, dev, -2, -2},
      {OMPX_IO_OP_READ, bsrc, d + 2 * BYTES, BYTES / 2, 0, dev, -2, -2},
      {OMPX_IO_OP_READ, bsrc, d + 2 * BYTES + BYTES / 2, BYTES / 2, BYTES / 2,
       dev, -2, -2},
  };
  made += ompx_io_batch_submit_depend(ops, 3, &failed, 1, &after) == 0;
  OT_EXPECT(made == 3, "%s: tasks created", label);

  // Every number is taken by another file before the tasks start; the
  // written file stays reachable through another descriptor. (The closed
  // number is the library's now: a duplicate took it.)
  int numbers[4] = {src, dst, bsrc, gone};
  int written = dup(dst);
  close(src);
  close(dst);
  close(bsrc);
  int reused = 0;
  for (int k = 0; k < 3; ++k) {
    int other = make_file("other", 'x');
    reused += dup2(other, numbers[k]) == numbers[k];
    close(other);
  }
  OT_EXPECT(reused == 3, "%s: the numbers name other files", label);
  OT_EXPECT(rr == -2 && wr == -2 && failed == -2, "%s: no task ran yet",
            label);

  omp_fulfill_event(gate);
#pragma omp taskwait
#pragma omp depobj(after) destroy

  OT_EXPECT(rr == BYTES && re == 0 && all(dev, d, -1, 'a'),
            "%s: read from the file of the call", label);
  OT_EXPECT(wr == BYTES && we == 0 && all(dev, NULL, written, 'w'),
            "%s: wrote to the file of the call", label);
  OT_EXPECT(all(dev, NULL, numbers[1], 'x'),
            "%s: the file that took the number was not written", label);
  OT_EXPECT(failed == 1 && ops[1].result == BYTES / 2 && !ops[1].error &&
                ops[2].result == BYTES / 2 && !ops[2].error &&
                all(dev, d + 2 * BYTES, -1, 'b'),
            "%s: batch read from the file of the call", label);
  OT_EXPECT(ops[0].result == -1 && ops[0].error == EBADF,
            "%s: batch operation on a closed fd: %s", label,
            ename(ops[0].error));
  OT_EXPECT(ops[0].fd == numbers[3] && ops[1].fd == numbers[2],
            "%s: the program's operations keep their descriptors", label);
  for (int k = 0; k < 3; ++k)
    close(numbers[k]);
  close(written);
  omp_target_free(d, dev);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  base = argv[1];
  round_trip(omp_get_default_device(), "device");
  round_trip(omp_get_initial_device(), "initial device");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device: tasks created
// CHECK: PASS: device: the numbers name other files
// CHECK: PASS: device: no task ran yet
// CHECK: PASS: device: read from the file of the call
// CHECK: PASS: device: wrote to the file of the call
// CHECK: PASS: device: the file that took the number was not written
// CHECK: PASS: device: batch read from the file of the call
// CHECK: PASS: device: batch operation on a closed fd: EBADF
// CHECK: PASS: device: the program's operations keep their descriptors
// CHECK: PASS: initial device: read from the file of the call
// CHECK: PASS: initial device: wrote to the file of the call
// CHECK: PASS: initial device: the file that took the number was not written
// CHECK: PASS: initial device: batch read from the file of the call
// CHECK: PASS: initial device: batch operation on a closed fd: EBADF
// CHECK-NOT: FAIL
// CHECK: failures: 0
