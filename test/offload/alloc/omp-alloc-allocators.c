// omp_alloc with the LLVM target memory allocators declared in omp.h
// (llvm_omp_target_{host,shared,device}_mem_alloc) on the default device.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 128

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int *h = (int *)omp_alloc(N * sizeof(int), llvm_omp_target_host_mem_alloc);
  int *s = (int *)omp_alloc(N * sizeof(int), llvm_omp_target_shared_mem_alloc);
  int *d = (int *)omp_alloc(N * sizeof(int), llvm_omp_target_device_mem_alloc);
  OT_EXPECT(h && s && d, "three allocations");
  if (!h || !s || !d) {
    OT_SUMMARY();
    return 1;
  }
  for (int i = 0; i < N; ++i) {
    h[i] = i;
    s[i] = 1;
  }
#pragma omp target is_device_ptr(h, s, d) device(dev)
  for (int i = 0; i < N; ++i)
    d[i] = h[i] * 10 + s[i];
  int back[N];
  omp_target_memcpy(back, d, sizeof(back), 0, 0, host, dev);
  printf("back[0] = %d back[127] = %d\n", back[0], back[N - 1]);
  omp_free(h, llvm_omp_target_host_mem_alloc);
  omp_free(s, llvm_omp_target_shared_mem_alloc);
  omp_free(d, llvm_omp_target_device_mem_alloc);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: three allocations
// CHECK: back[0] = 1 back[127] = 1271
// CHECK-NOT: FAIL
// CHECK: failures: 0
