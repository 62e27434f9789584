// map(alloc:) creates device storage without copying in either direction;
// target update moves data explicitly.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 128

int main(void) {
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = 1;
  int dev = omp_get_default_device();
#pragma omp target data map(alloc : a)
  {
    OT_EXPECT(omp_target_is_present(a, dev), "alloc'd array is present");
#pragma omp target
    for (int i = 0; i < N; ++i)
      a[i] = 100 + i;
    OT_EXPECT(a[0] == 1 && a[N - 1] == 1, "host copy untouched inside region");
#pragma omp target update from(a[0 : 4])
    printf("after partial update: %d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4]);
  }
  // alloc: nothing copied back at the end of the region either.
  printf("after region: a[5] = %d a[127] = %d\n", a[5], a[N - 1]);
  OT_EXPECT(!omp_target_is_present(a, dev), "released after region");

  // enter data alloc + update to + exit data from round trip.
  double d[32];
  for (int i = 0; i < 32; ++i)
    d[i] = i;
#pragma omp target enter data map(alloc : d)
#pragma omp target update to(d)
#pragma omp target
  for (int i = 0; i < 32; ++i)
    d[i] *= 2.5;
#pragma omp target exit data map(from : d)
  printf("d[31] = %.1f\n", d[31]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: alloc'd array is present
// CHECK: PASS: host copy untouched inside region
// CHECK: after partial update: 100 101 102 103 1
// CHECK: after region: a[5] = 1 a[127] = 1
// CHECK: PASS: released after region
// CHECK: d[31] = 77.5
// CHECK-NOT: FAIL
// CHECK: failures: 0
