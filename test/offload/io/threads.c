// Many host threads call ompx at once, on every device: each OpenMP thread
// reads and writes its own slice with its own device's memory, mixing sync
// and async calls; libompx_io's device lookup and the engines are shared.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMP_NUM_THREADS=8 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMP_NUM_THREADS=8 OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SLICES 32
#define SLICE ((256 << 10) + 13)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  size_t size = (size_t)SLICES * SLICE;
  unsigned char *h = malloc(size);
  for (size_t i = 0; i < size; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, size, 0) != (ssize_t)size)
    return 3;
  int ndev = omp_get_num_devices();
  int errors = 0;

#pragma omp parallel for schedule(dynamic, 1) reduction(+ : errors)
  for (int k = 0; k < SLICES; ++k) {
    int dev = k % ndev;
    unsigned char *d = omp_target_alloc(SLICE, dev);
    unsigned char *back = malloc(SLICE);
    off_t off = (off_t)k * SLICE;
    ssize_t n;
    if (k % 2) {
      ompx_io_request_t r;
      n = ompx_target_pread_async(fd, d, SLICE, off, dev, &r) ? -1
                                                               : ompx_io_wait(r);
    } else {
      n = ompx_target_pread(fd, d, SLICE, off, dev);
    }
    errors += n != SLICE;
    omp_target_memcpy(back, d, SLICE, 0, 0, omp_get_initial_device(), dev);
    for (size_t i = 0; i < SLICE; ++i)
      errors += back[i] != ot_pattern(off + i, 1);
    // Write the slice to the second half of the file.
    errors += ompx_target_pwrite(fd, d, SLICE, (off_t)size + off, dev) != SLICE;
    omp_target_free(d, dev);
    free(back);
  }
  OT_EXPECT(errors == 0, "every thread read its slice exactly");
  memset(h, 0, size);
  int ok = pread(fd, h, size, size) == (ssize_t)size;
  for (size_t i = 0; i < size; ++i)
    ok &= h[i] == ot_pattern(i, 1);
  OT_EXPECT(ok, "every thread's write landed");
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: every thread read its slice exactly
// CHECK: PASS: every thread's write landed
// CHECK-NOT: FAIL
// CHECK: failures: 0
