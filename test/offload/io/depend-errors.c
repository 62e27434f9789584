// Errors of the depend transfers. A bad depend list fails the call at once
// with -1 and EINVAL, and a descriptor that is not open with EBADF (the
// call duplicates it), creating no task. What the transfer's submission
// finds (a descriptor not open for the transfer, negative offset, unknown
// device, a buffer that is not the device's) completes the task at once,
// and what only the transfer finds (ENOSPC from /dev/full) when it is done:
// after taskwait, result -1 and the errno. With error NULL a failure is
// printed on stderr, one line, naming the program's descriptor. Tasks that
// depend on a failed transfer still run.
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io_depend.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  // One stream, in order: the stderr line lands between the stdout lines
  // around it.
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = ot_open_zeros(argv[1]);
  int dev = omp_get_default_device();
  char *d = omp_target_alloc(4096, dev);
  char *heap = malloc(4096);
  ssize_t r = -2;
  int e = -2;
  omp_depend_t o;
#pragma omp depobj(o) depend(out: d[0])

  // Refused at once: no task.
  EXPECT_ERRNO(ompx_target_pread_depend(fd, d, 64, 0, dev, &r, &e, -1, &o),
               EINVAL, "depobj_count -1");
  EXPECT_ERRNO(ompx_target_pwrite_depend(fd, d, 64, 0, dev, &r, &e, 1, NULL),
               EINVAL, "NULL depobj_list with depobj_count 1");
  OT_EXPECT(strstr(ompx_io_last_error(), "depobj_list is NULL") != NULL,
            "last error: %s", ompx_io_last_error());
  EXPECT_ERRNO(ompx_target_pread_depend(-1, d, 64, 0, dev, &r, &e, 1, &o),
               EBADF, "fd -1");
  printf("%s\n", ompx_io_last_error());
  int closed = open("/dev/null", O_RDONLY);
  close(closed);
  EXPECT_ERRNO(ompx_target_pwrite_depend(closed, d, 64, 0, dev, &r, &e, 1, &o),
               EBADF, "closed fd");
#pragma omp taskwait
  OT_EXPECT(r == -2 && e == -2, "no task ran");

  // Found by the task.
  struct {
    const char *what;
    int write, fd, dev, want;
    char *buf;
    off_t offset;
    ssize_t r;
    int e;
  } cases[] = {
      {"write-only fd", 0, open("/dev/null", O_WRONLY), dev, EBADF, d, 0},
      {"negative offset", 0, fd, dev, EINVAL, d, -7},
      {"unknown device", 0, fd, omp_get_num_devices() + 1, ENODEV, d, 0},
      {"malloc buffer", 1, fd, dev, EFAULT, heap, 0},
      {"write to /dev/full", 1, open("/dev/full", O_WRONLY), dev, ENOSPC, d,
       0},
  };
  int n = sizeof cases / sizeof cases[0];
  for (int i = 0; i < n; ++i) {
    cases[i].r = -2;
    cases[i].e = -2;
    int rc = cases[i].write
                 ? ompx_target_pwrite_depend(cases[i].fd, cases[i].buf, 64,
                                             cases[i].offset, cases[i].dev,
                                             &cases[i].r, &cases[i].e, 1, &o)
                 : ompx_target_pread_depend(cases[i].fd, cases[i].buf, 64,
                                            cases[i].offset, cases[i].dev,
                                            &cases[i].r, &cases[i].e, 1, &o);
    OT_EXPECT(rc == 0, "%s: task created", cases[i].what);
  }
#pragma omp taskwait
  for (int i = 0; i < n; ++i)
    OT_EXPECT(cases[i].r == -1 && cases[i].e == cases[i].want,
              "%s: result %zd error %s", cases[i].what, cases[i].r,
              ename(cases[i].e));

  // error NULL: the failure goes to stderr, naming the program's
  // descriptor (the task used a duplicate of it).
  int wronly = open("/dev/null", O_WRONLY);
  printf("before the stderr line: fd %d\n", wronly);
  r = -2;
  int rc = ompx_target_pread_depend(wronly, d, 64, 0, dev, &r, NULL, 0, NULL);
#pragma omp taskwait
  OT_EXPECT(rc == 0 && r == -1, "result -1 without error");
  close(wronly);

  // Inside parallel/single, a worker thread's task.
#pragma omp parallel num_threads(3)
#pragma omp single
  {
    // A plain task that depends on a failed transfer still runs. (Outside
    // a parallel region, libomp 16's taskwait may return before a plain
    // task that depends on a detached task fulfilled by another thread:
    // docs/errors-and-env.md.)
    ssize_t pr = -2, fr = -2;
    int pe = -2, fe = -2, after = 0;
    int full = open("/dev/full", O_WRONLY);
    ompx_target_pread_depend(full, d, 64, 0, dev, &pr, &pe, 1, &o);
    ompx_target_pwrite_depend(full, d, 64, 0, dev, &fr, &fe, 1, &o);
#pragma omp task depend(in: d[0]) shared(after)
    after = 1;
#pragma omp taskwait
    OT_EXPECT(pr == -1 && pe == EBADF,
              "single: read of a write-only fd: result %zd error %s", pr,
              ename(pe));
    OT_EXPECT(fr == -1 && fe == ENOSPC, "single: /dev/full: result %zd error %s",
              fr, ename(fe));
    OT_EXPECT(after == 1, "single: a task after the failed ones ran");
    close(full);
  }

#pragma omp depobj(o) destroy
  omp_target_free(d, dev);
  free(heap);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: depobj_count -1 -> -1 EINVAL
// CHECK: PASS: NULL depobj_list with depobj_count 1 -> -1 EINVAL
// CHECK: PASS: last error: ompx_target_pwrite_depend: depobj_list is NULL
// CHECK: PASS: fd -1 -> -1 EBADF
// CHECK-NEXT: ompx_target_pread_depend: fd -1 is not open
// CHECK: PASS: closed fd -> -1 EBADF
// CHECK: PASS: no task ran
// CHECK: PASS: write-only fd: result -1 error EBADF
// CHECK: PASS: negative offset: result -1 error EINVAL
// CHECK: PASS: unknown device: result -1 error ENODEV
// CHECK: PASS: malloc buffer: result -1 error EFAULT
// CHECK: PASS: write to /dev/full: result -1 error ENOSPC
// CHECK: before the stderr line: fd [[FD:[0-9]+]]
// CHECK-NEXT: ompx-io[{{[0-9]+}}]: ompx_target_pread_depend on device {{[0-9]+}}: {{.*}}fd [[FD]] is not open for reading
// CHECK-NEXT: PASS: result -1 without error
// CHECK: PASS: single: read of a write-only fd: result -1 error EBADF
// CHECK: PASS: single: /dev/full: result -1 error ENOSPC
// CHECK: PASS: single: a task after the failed ones ran
// CHECK-NOT: FAIL
// CHECK: failures: 0
