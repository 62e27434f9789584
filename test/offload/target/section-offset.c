// Mapping only a middle section of an array: the device updates exactly
// that section, neighbours on the host keep their values.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int a[100];
  for (int i = 0; i < 100; ++i)
    a[i] = i;
#pragma omp target map(tofrom : a[10 : 20])
  for (int i = 10; i < 30; ++i)
    a[i] = -a[i];
  int bad = 0;
  for (int i = 0; i < 100; ++i)
    bad += a[i] != ((i >= 10 && i < 30) ? -i : i);
  OT_EXPECT(bad == 0, "only a[10:20] changed");
  printf("a[9] a[10] a[29] a[30] = %d %d %d %d\n", a[9], a[10], a[29], a[30]);

  // A sub-section of a section that is already mapped by target data is
  // found in the existing mapping; the update is copied back at the end of
  // the data region.
  double b[64];
  for (int i = 0; i < 64; ++i)
    b[i] = 1.0;
#pragma omp target data map(tofrom : b[8 : 32])
  {
#pragma omp target map(tofrom : b[16 : 4])
    for (int i = 16; i < 20; ++i)
      b[i] = b[i] + i;
  }
  printf("b[7] b[16] b[19] b[20] = %.1f %.1f %.1f %.1f\n", b[7], b[16], b[19], b[20]);

  // Row sections of a 2D array.
  int m[6][10];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 10; ++j)
      m[i][j] = 0;
#pragma omp target map(tofrom : m[2 : 3][0 : 10])
  for (int i = 2; i < 5; ++i)
    for (int j = 0; j < 10; ++j)
      m[i][j] = i * 10 + j;
  int sum = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 10; ++j)
      sum += m[i][j];
  printf("rows 2..4 sum = %d m[1][9] = %d m[5][0] = %d\n", sum, m[1][9], m[5][0]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: only a[10:20] changed
// CHECK: a[9] a[10] a[29] a[30] = 9 -10 -29 30
// CHECK: b[7] b[16] b[19] b[20] = 1.0 17.0 20.0 1.0
// CHECK: rows 2..4 sum = 1035 m[1][9] = 0 m[5][0] = 0
// CHECK-NOT: FAIL
// CHECK: failures: 0
