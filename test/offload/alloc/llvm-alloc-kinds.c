// The LLVM extensions llvm_omp_target_alloc_{device,host,shared} and the
// matching llvm_omp_target_free_* (exported by libomptarget.so.16, not
// declared in omp.h).  Host and shared memory is accessible from the host
// and from target regions; device memory is reached through memcpy.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include "offload_test.h"

extern void *llvm_omp_target_alloc_device(size_t size, int device_num);
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void *llvm_omp_target_alloc_shared(size_t size, int device_num);
extern void llvm_omp_target_free_device(void *ptr, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);
extern void llvm_omp_target_free_shared(void *ptr, int device_num);

#define N 256

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();

  int *dptr = (int *)llvm_omp_target_alloc_device(N * sizeof(int), dev);
  int *hptr = (int *)llvm_omp_target_alloc_host(N * sizeof(int), dev);
  int *sptr = (int *)llvm_omp_target_alloc_shared(N * sizeof(int), dev);
  OT_EXPECT(dptr != NULL, "device allocation");
  OT_EXPECT(hptr != NULL, "host allocation");
  OT_EXPECT(sptr != NULL, "shared allocation");
  if (!dptr || !hptr || !sptr) {
    OT_SUMMARY();
    return 1;
  }

  // Host and shared memory: written directly by the host.
  for (int i = 0; i < N; ++i) {
    hptr[i] = i;
    sptr[i] = 2 * i;
  }
  // Device memory: filled by a copy.
  int tmp[N];
  for (int i = 0; i < N; ++i)
    tmp[i] = 3 * i;
  OT_EXPECT(omp_target_memcpy(dptr, tmp, sizeof(tmp), 0, 0, dev, host) == 0,
            "copy into device allocation");

#pragma omp target is_device_ptr(dptr, hptr, sptr) device(dev)
  for (int i = 0; i < N; ++i) {
    int v = dptr[i] + hptr[i] + sptr[i]; // 6 * i
    dptr[i] = v;
    sptr[i] = v + 1;
  }

  OT_EXPECT(omp_target_memcpy(tmp, dptr, sizeof(tmp), 0, 0, host, dev) == 0,
            "copy out of device allocation");
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += tmp[i] != 6 * i || sptr[i] != 6 * i + 1;
  OT_EXPECT(bad == 0, "device and shared memory hold the kernel's results");
  printf("tmp[255] = %d sptr[255] = %d\n", tmp[N - 1], sptr[N - 1]);

  llvm_omp_target_free_device(dptr, dev);
  llvm_omp_target_free_host(hptr, dev);
  llvm_omp_target_free_shared(sptr, dev);

  // Many allocate/free cycles of each kind.
  int cycles_ok = 1;
  for (int k = 0; k < 50; ++k) {
    void *a = llvm_omp_target_alloc_device(64 + k, dev);
    void *b = llvm_omp_target_alloc_host(64 + k, dev);
    void *c = llvm_omp_target_alloc_shared(64 + k, dev);
    cycles_ok = cycles_ok && a && b && c;
    llvm_omp_target_free_device(a, dev);
    llvm_omp_target_free_host(b, dev);
    llvm_omp_target_free_shared(c, dev);
  }
  OT_EXPECT(cycles_ok, "50 allocate/free cycles of each kind");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device allocation
// CHECK: PASS: host allocation
// CHECK: PASS: shared allocation
// CHECK: PASS: copy into device allocation
// CHECK: PASS: copy out of device allocation
// CHECK: PASS: device and shared memory hold the kernel's results
// CHECK: tmp[255] = 1530 sptr[255] = 1531
// CHECK: PASS: 50 allocate/free cycles of each kind
// CHECK-NOT: FAIL
// CHECK: failures: 0
