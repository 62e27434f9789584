// The if clause on target and target data: false runs on the host with host
// memory, true offloads.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

static int where(int cond) {
  int initial = -1;
#pragma omp target if (cond) map(from : initial)
  initial = omp_is_initial_device();
  return initial;
}

int main(void) {
  printf("if(0): initial device = %d\n", where(0));
  printf("if(1): initial device = %d\n", where(1));

  int n = 50, x = 1;
#pragma omp target if (target : n > 100) map(tofrom : x)
  x = x + omp_is_initial_device() * 10;
  printf("n=50: x = %d\n", x);
  n = 500;
  x = 1;
#pragma omp target if (target : n > 100) map(tofrom : x)
  x = x + omp_is_initial_device() * 10;
  printf("n=500: x = %d\n", x);

  // A host-executed region works on the host variables directly.
  int v = 3;
#pragma omp target if (0) map(to : v)
  v = 9;
  printf("host fallback wrote v = %d\n", v);

  // target data if(0) maps nothing.
  int arr[16];
  int dev = omp_get_default_device();
#pragma omp target data if (0) map(to : arr)
  { OT_EXPECT(!omp_target_is_present(arr, dev), "target data if(0) maps nothing"); }
#pragma omp target data if (1) map(to : arr)
  { OT_EXPECT(omp_target_is_present(arr, dev), "target data if(1) maps"); }
  OT_EXPECT(!omp_target_is_present(arr, dev), "unmapped after target data");
  OT_SUMMARY();
  return 0;
}

// CHECK: if(0): initial device = 1
// CHECK: if(1): initial device = 0
// CHECK: n=50: x = 11
// CHECK: n=500: x = 1
// CHECK: host fallback wrote v = 9
// CHECK: PASS: target data if(0) maps nothing
// CHECK: PASS: target data if(1) maps
// CHECK: PASS: unmapped after target data
// CHECK-NOT: FAIL
// CHECK: failures: 0
