// omp_get_mapped_ptr for mapped, unmapped and initial-device pointers.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  double v[100];
  for (int i = 0; i < 100; ++i)
    v[i] = i;
  OT_EXPECT(omp_get_mapped_ptr(v, dev) == NULL, "unmapped: NULL");
  OT_EXPECT(omp_get_mapped_ptr(v, host) == (void *)v, "initial device: the pointer itself");
#pragma omp target enter data map(to : v)
  double *dp = (double *)omp_get_mapped_ptr(v, dev);
  OT_EXPECT(dp != NULL, "mapped: non-NULL");
  OT_EXPECT(omp_get_mapped_ptr(&v[37], dev) == (void *)(dp + 37), "interior element");

  // The mapped pointer is a valid device pointer.
  double got = 0;
#pragma omp target is_device_ptr(dp) map(from : got)
  got = dp[37] + dp[99];
  printf("device reads through mapped ptr: %.1f\n", got);
  OT_EXPECT(omp_target_memcpy(&got, dp, sizeof(double), 0, 50 * sizeof(double), host, dev) ==
                0,
            "memcpy from mapped ptr");
  printf("memcpy got %.1f\n", got);
#pragma omp target exit data map(delete : v)
  OT_EXPECT(omp_get_mapped_ptr(v, dev) == NULL, "unmapped again: NULL");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: unmapped: NULL
// CHECK: PASS: initial device: the pointer itself
// CHECK: PASS: mapped: non-NULL
// CHECK: PASS: interior element
// CHECK: device reads through mapped ptr: 136.0
// CHECK: PASS: memcpy from mapped ptr
// CHECK: memcpy got 50.0
// CHECK: PASS: unmapped again: NULL
// CHECK-NOT: FAIL
// CHECK: failures: 0
