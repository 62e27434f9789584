// A depend transfer starts only once the tasks it depends on completed: a
// task depend(out: token) sleeps, then rewrites the file; the read that
// depends on the token must see the new bytes, and a target nowait kernel
// that depends on the read must see them on the device. Outside any
// parallel region (libomp runs the sleeping task at once) and inside
// parallel/single (another thread runs it while the read waits).
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
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io_depend.h"

#define SIZE (1 << 20)

static void order(const char *path, int dev, const char *label) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(SIZE);
  memset(h, 'o', SIZE);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE) {
    OT_EXPECT(0, "%s: old file", label);
    return;
  }
  unsigned char *d = omp_target_alloc(SIZE, dev);
  long *bad = omp_target_alloc(sizeof(long), dev);
  int token = 0;
  omp_depend_t after_token, d_out;
#pragma omp depobj(after_token) depend(in: token)
#pragma omp depobj(d_out) depend(out: d[0])
  omp_depend_t deps[2] = {after_token, d_out};
  ssize_t r = -2;
  int e = -2;

#pragma omp task depend(out: token) shared(fd)
  {
    usleep(300 * 1000);
    unsigned char *n = malloc(SIZE);
    memset(n, 'n', SIZE);
    if (pwrite(fd, n, SIZE, 0) != SIZE)
      perror("pwrite");
    free(n);
  }
  int rc = ompx_target_pread_depend(fd, d, SIZE, 0, dev, &r, &e, 2, deps);
#pragma omp target device(dev) is_device_ptr(d, bad) depend(in: d[0]) nowait
  {
    long n = 0;
    for (int i = 0; i < SIZE; ++i)
      n += d[i] != 'n';
    *bad = n;
  }
#pragma omp taskwait
  long kernel_bad = -1;
  omp_target_memcpy(&kernel_bad, bad, sizeof(long), 0, 0,
                    omp_get_initial_device(), dev);
  memset(h, 0, SIZE);
  omp_target_memcpy(h, d, SIZE, 0, 0, omp_get_initial_device(), dev);
  long host_bad = 0;
  for (int i = 0; i < SIZE; ++i)
    host_bad += h[i] != 'n';
  OT_EXPECT(rc == 0 && r == SIZE && e == 0, "%s: read %zd bytes, error %d",
            label, r, e);
  OT_EXPECT(host_bad == 0, "%s: the read saw the rewritten file (%ld old)",
            label, host_bad);
  OT_EXPECT(kernel_bad == 0, "%s: the kernel saw the data read (%ld other)",
            label, kernel_bad);
#pragma omp depobj(after_token) destroy
#pragma omp depobj(d_out) destroy
  omp_target_free(d, dev);
  omp_target_free(bad, dev);
  free(h);
  close(fd);
  unlink(path);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int dev = omp_get_default_device();
  order(argv[1], dev, "serial");
#pragma omp parallel num_threads(4)
#pragma omp single
  order(argv[1], dev, "single");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: serial: read 1048576 bytes, error 0
// CHECK: PASS: serial: the read saw the rewritten file (0 old)
// CHECK: PASS: serial: the kernel saw the data read (0 other)
// CHECK: PASS: single: read 1048576 bytes, error 0
// CHECK: PASS: single: the read saw the rewritten file (0 old)
// CHECK: PASS: single: the kernel saw the data read (0 other)
// CHECK-NOT: FAIL
// CHECK: failures: 0
