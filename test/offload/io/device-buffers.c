// Every kind of device pointer is a valid buffer: omp_target_alloc,
// llvm_omp_target_alloc_device/host/shared, a pointer inside an allocation,
// and the device address of mapped data from use_device_ptr. A target
// region sees the bytes read into each (sum computed on the device), and
// bytes a kernel wrote are what a write puts in the file.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

extern void *llvm_omp_target_alloc_device(size_t size, int device_num);
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void *llvm_omp_target_alloc_shared(size_t size, int device_num);
extern void llvm_omp_target_free_device(void *ptr, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);
extern void llvm_omp_target_free_shared(void *ptr, int device_num);

#define N 100000

// Sum of the N bytes at p, computed by the device.
static long device_sum(unsigned char *p, int dev) {
  long s = 0;
#pragma omp target is_device_ptr(p) map(tofrom : s) device(dev)
  for (int i = 0; i < N; ++i)
    s += p[i];
  return s;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(N);
  long want = 0;
  for (size_t i = 0; i < N; ++i) {
    h[i] = ot_pattern(i, 1);
    want += h[i];
  }
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, N, 0) != N)
    return 3;
  int dev = omp_get_default_device();
  printf("want %ld\n", want);

  struct {
    const char *name;
    unsigned char *p;
  } bufs[] = {
      {"omp_target_alloc", omp_target_alloc(N, dev)},
      {"alloc_device", llvm_omp_target_alloc_device(N, dev)},
      {"alloc_host", llvm_omp_target_alloc_host(N, dev)},
      {"alloc_shared", llvm_omp_target_alloc_shared(N, dev)},
      {"interior", (unsigned char *)omp_target_alloc(N + 4096, dev) + 4096},
  };
  for (int k = 0; k < 5; ++k) {
    ssize_t n = ompx_target_pread(fd, bufs[k].p, N, 0, dev);
    OT_EXPECT(n == N && device_sum(bufs[k].p, dev) == want,
              "%s: the device sees the bytes read", bufs[k].name);
  }

  // use_device_ptr: read into the device copy of a mapped array, then bring
  // it back with target update.
  unsigned char *arr = calloc(1, N);
  ssize_t n = -1;
#pragma omp target data map(to : arr[0 : N]) device(dev)
  {
#pragma omp target data use_device_ptr(arr) device(dev)
    n = ompx_target_pread(fd, arr, N, 0, dev);
#pragma omp target update from(arr[0 : N]) device(dev)
  }
  OT_EXPECT(n == N && memcmp(arr, h, N) == 0,
            "use_device_ptr: mapped data updated from the device");

  // A kernel writes, ompx_target_pwrite saves.
  unsigned char *d = bufs[0].p;
#pragma omp target is_device_ptr(d) device(dev)
  for (int i = 0; i < N; ++i)
    d[i] = (unsigned char)(255 - i % 251);
  n = ompx_target_pwrite(fd, d, N, N, dev);
  memset(h, 0, N);
  int ok = n == N && pread(fd, h, N, N) == N;
  for (int i = 0; i < N; ++i)
    ok &= h[i] == (unsigned char)(255 - i % 251);
  OT_EXPECT(ok, "kernel output written to the file");

  omp_target_free(bufs[0].p, dev);
  llvm_omp_target_free_device(bufs[1].p, dev);
  llvm_omp_target_free_host(bufs[2].p, dev);
  llvm_omp_target_free_shared(bufs[3].p, dev);
  omp_target_free(bufs[4].p - 4096, dev);
  free(arr);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: want [[WANT:[0-9]+]]
// CHECK: PASS: omp_target_alloc: the device sees the bytes read
// CHECK: PASS: alloc_device: the device sees the bytes read
// CHECK: PASS: alloc_host: the device sees the bytes read
// CHECK: PASS: alloc_shared: the device sees the bytes read
// CHECK: PASS: interior: the device sees the bytes read
// CHECK: PASS: use_device_ptr: mapped data updated from the device
// CHECK: PASS: kernel output written to the file
// CHECK-NOT: FAIL
// CHECK: failures: 0
