// use_device_ptr / use_device_addr hand out the device address of mapped
// data; is_device_ptr passes such addresses into target regions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int n = 100;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i)
    p[i] = i;
  void *via_ptr = NULL;
  void *via_addr = NULL;
  int arr[10] = {0};
#pragma omp target data map(tofrom : p[0 : n], arr)
  {
#pragma omp target data use_device_ptr(p)
    via_ptr = p;
#pragma omp target data use_device_addr(arr)
    via_addr = &arr[0];
    OT_EXPECT(via_ptr == omp_get_mapped_ptr(p, dev), "use_device_ptr = omp_get_mapped_ptr");
    OT_EXPECT(via_addr == omp_get_mapped_ptr(arr, dev), "use_device_addr = omp_get_mapped_ptr");

    int *dp = (int *)via_ptr;
#pragma omp target is_device_ptr(dp)
    for (int i = 0; i < n; ++i)
      dp[i] += 1000;
    // The device pointer also works with omp_target_memcpy.
    int one = 77;
    OT_EXPECT(omp_target_memcpy(via_addr, &one, sizeof(int), 3 * sizeof(int), 0, dev,
                                omp_get_initial_device()) == 0,
              "memcpy to use_device_addr pointer");
  }
  printf("p[0] = %d p[99] = %d arr[3] = %d\n", p[0], p[99], arr[3]);
  free(p);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: use_device_ptr = omp_get_mapped_ptr
// CHECK: PASS: use_device_addr = omp_get_mapped_ptr
// CHECK: PASS: memcpy to use_device_addr pointer
// CHECK: p[0] = 1000 p[99] = 1099 arr[3] = 77
// CHECK-NOT: FAIL
// CHECK: failures: 0
