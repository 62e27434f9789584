// ompx_io_batch_submit_depend: a batch run as an OpenMP task ordered by
// depobj objects. Tensors of one file (many small ones whose ranges touch,
// and two large ones) are read into one device allocation by a batch task,
// a target nowait kernel that depends on it transforms them, and a second
// batch task writes them to another file; one taskwait joins the three.
// Outside any parallel region, inside parallel/single, and on the initial
// device. Then the negative cases: a bad operation fails alone after the
// taskwait (its error, the failure count) while the others land; NULL ops,
// nops 0 and a bad depend list are refused at once with EINVAL; a batch task
// done in the program's own thread leaves its last error alone; a program
// that exits with a batch task still running finishes it first.
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// The HSA emulation runs no kernels; the GPU round runs this on amdgcn.
// UNSUPPORTED: hsa-emulation
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic
// RUN: env OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat exit 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,EXIT

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io_depend.h"

#define SMALL 64             // 4 KiB tensors, back to back in the file
#define SMALL_BYTES 4096
#define LARGE 2              // 1 MiB tensors after them
#define LARGE_BYTES (1 << 20)
#define OPS (SMALL + LARGE)
#define TOTAL (SMALL * SMALL_BYTES + LARGE * LARGE_BYTES)

static unsigned value(size_t i, unsigned seed) {
  return (unsigned)(i * 2654435761u + seed);
}

static int open_file(const char *base, const char *what, unsigned seed) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%s", base, what);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unlink(path);
  if (fd >= 0 && seed) {
    unsigned *h = malloc(TOTAL);
    for (size_t i = 0; i < TOTAL / sizeof *h; ++i)
      h[i] = value(i, seed);
    if (pwrite(fd, h, TOTAL, 0) != TOTAL)
      fd = -1;
    free(h);
  }
  return fd;
}

/// One operation per tensor: tensor k of file fd at its offset, into or out
/// of the same offset of device buffer d.
static void plan(ompx_io_op_t *ops, int opcode, int fd, char *d, int dev) {
  size_t off = 0;
  for (int k = 0; k < OPS; ++k) {
    size_t len = k < SMALL ? SMALL_BYTES : LARGE_BYTES;
    ompx_io_op_t op = {opcode, fd, d + off, len, (off_t)off, dev, -2, -2};
    ops[k] = op;
    off += len;
  }
}

static int all_done(const ompx_io_op_t *ops, int n) {
  for (int k = 0; k < n; ++k)
    if (ops[k].result != (ssize_t)ops[k].count || ops[k].error)
      return 0;
  return 1;
}

/// Read, transform, write: three tasks created at once, then taskwait.
static void round_trip(const char *base, int dev, unsigned seed,
                       const char *label) {
  int in = open_file(base, "in", seed), out = open_file(base, "out", 0);
  unsigned *d = omp_target_alloc(TOTAL, dev);
  static ompx_io_op_t rd[OPS], wr[OPS];
  plan(rd, OMPX_IO_OP_READ, in, (char *)d, dev);
  plan(wr, OMPX_IO_OP_WRITE, out, (char *)d, dev);
  ssize_t rfail = -2, wfail = -2;
  omp_depend_t d_out, d_in;
#pragma omp depobj(d_out) depend(out: d[0])
#pragma omp depobj(d_in) depend(in: d[0])
  int made = ompx_io_batch_submit_depend(rd, OPS, &rfail, 1, &d_out) == 0;
  const size_t n = TOTAL / sizeof(unsigned);
  if (dev == omp_get_initial_device()) {
#pragma omp task depend(inout: d[0])
    for (size_t i = 0; i < n; ++i)
      d[i] = d[i] * 3 + 1;
  } else {
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(d) \
    depend(inout: d[0]) nowait
    for (size_t i = 0; i < n; ++i)
      d[i] = d[i] * 3 + 1;
  }
  made += ompx_io_batch_submit_depend(wr, OPS, &wfail, 1, &d_in) == 0;
#pragma omp taskwait
#pragma omp depobj(d_out) destroy
#pragma omp depobj(d_in) destroy
  OT_EXPECT(made == 2, "%s: tasks created", label);
  OT_EXPECT(rfail == 0 && all_done(rd, OPS), "%s: every read landed", label);
  OT_EXPECT(wfail == 0 && all_done(wr, OPS), "%s: every write landed", label);
  unsigned *h = malloc(TOTAL);
  long bad = pread(out, h, TOTAL, 0) == TOTAL ? 0 : -1;
  for (size_t i = 0; bad >= 0 && i < n; ++i)
    bad += h[i] != value(i, seed) * 3 + 1;
  OT_EXPECT(bad == 0, "%s: file written after the kernel (%ld bad)", label,
            bad);
  free(h);
  omp_target_free(d, dev);
  close(in);
  close(out);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();

  round_trip(argv[1], dev, 11, "serial");
#pragma omp parallel num_threads(4)
#pragma omp single
  round_trip(argv[1], dev, 22, "single");
  round_trip(argv[1], omp_get_initial_device(), 33, "initial device");

  // A bad descriptor fails its operation alone.
  int in = open_file(argv[1], "in", 44);
  char *d = omp_target_alloc(TOTAL, dev);
  static ompx_io_op_t ops[OPS];
  plan(ops, OMPX_IO_OP_READ, in, d, dev);
  ops[5].fd = -1;
  ssize_t failed = -2;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    OT_EXPECT(ompx_io_batch_submit_depend(ops, OPS, &failed, 0, NULL) == 0,
              "bad fd: task created");
#pragma omp taskwait
  }
  OT_EXPECT(failed == 1, "bad fd: one failed (%zd)", failed);
  OT_EXPECT(ops[5].result == -1 && ops[5].error == EBADF,
            "bad fd: its error is EBADF");
  ops[5].result = (ssize_t)ops[5].count, ops[5].error = 0;
  OT_EXPECT(all_done(ops, OPS), "bad fd: the others landed");

  // A batch task that completes in the program's own thread (host memory,
  // done at submission) leaves that thread's last error alone.
  ompx_io_wait((ompx_io_request_t)424242);
  ops[0].device_num = ops[5].device_num = omp_get_initial_device();
  ops[0].device_buf = malloc(ops[0].count);
  ops[5].device_buf = malloc(ops[5].count);
  failed = -2;
  OT_EXPECT(ompx_io_batch_submit_depend(ops, 6, &failed, 0, NULL) == 0,
            "host batch: task created");
#pragma omp taskwait
  OT_EXPECT(failed == 1 && ops[5].error == EBADF, "host batch: one failed");
  OT_EXPECT(strstr(ompx_io_last_error(), "ompx_io_wait") != NULL,
            "host batch: the thread's last error is its own (%s)",
            ompx_io_last_error());
  free(ops[0].device_buf);
  free(ops[5].device_buf);

  // Refused at once.
  errno = 0;
  OT_EXPECT(ompx_io_batch_submit_depend(NULL, 1, &failed, 0, NULL) == -1 &&
                errno == EINVAL,
            "NULL ops: EINVAL");
  printf("%s\n", ompx_io_last_error());
  errno = 0;
  OT_EXPECT(ompx_io_batch_submit_depend(ops, 0, &failed, 0, NULL) == -1 &&
                errno == EINVAL,
            "nops 0: EINVAL");
  printf("%s\n", ompx_io_last_error());
  errno = 0;
  OT_EXPECT(ompx_io_batch_submit_depend(ops, OPS, &failed, -1, NULL) == -1 &&
                errno == EINVAL,
            "negative depobj_count: EINVAL");
  omp_target_free(d, dev);
  close(in);
  OT_SUMMARY();

  // Leave with a batch task still reading: exit finishes it first.
  if (argc > 2) {
    in = open_file(argv[1], "in", 55);
    d = omp_target_alloc(TOTAL, dev);
    plan(ops, OMPX_IO_OP_READ, in, d, dev);
    ompx_io_batch_submit_depend(ops, OPS, NULL, 0, NULL);
    printf("exit with a batch in flight\n");
  }
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: serial: tasks created
// CHECK: PASS: serial: every read landed
// CHECK: PASS: serial: every write landed
// CHECK: PASS: serial: file written after the kernel (0 bad)
// CHECK: PASS: single: file written after the kernel (0 bad)
// CHECK: PASS: initial device: file written after the kernel (0 bad)
// CHECK: PASS: bad fd: one failed (1)
// CHECK: PASS: bad fd: its error is EBADF
// CHECK: PASS: bad fd: the others landed
// CHECK: PASS: host batch: one failed
// CHECK: PASS: host batch: the thread's last error is its own
// CHECK: PASS: NULL ops: EINVAL
// CHECK-NEXT: ompx_io_batch_submit_depend: ops is NULL
// CHECK: PASS: nops 0: EINVAL
// CHECK-NEXT: ompx_io_batch_submit_depend: nops is 0
// CHECK: PASS: negative depobj_count: EINVAL
// CHECK: failures: 0
// EXIT: exit with a batch in flight
