// collapse(2) and collapse(3) loops in combined teams constructs.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

#define NI 37
#define NJ 53
#define NK 5

int main(void) {
  static int m[NI][NJ];
  static int c[NK][NI][NJ];

#pragma omp target teams distribute parallel for collapse(2) map(from : m)
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j)
      m[i][j] = i * 1000 + j;
  int bad = 0;
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j)
      bad += m[i][j] != i * 1000 + j;
  OT_EXPECT(bad == 0, "collapse(2) wrote every element once");

  long long s = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+ : s) map(to : m)
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j)
      s += m[i][j];
  printf("collapse(2) sum = %lld\n", s);

#pragma omp target teams distribute parallel for collapse(3) map(from : c)
  for (int k = 0; k < NK; ++k)
    for (int i = 0; i < NI; ++i)
      for (int j = 0; j < NJ; ++j)
        c[k][i][j] = k + i + j;
  long long s3 = 0;
  for (int k = 0; k < NK; ++k)
    for (int i = 0; i < NI; ++i)
      for (int j = 0; j < NJ; ++j)
        s3 += c[k][i][j];
  printf("collapse(3) sum = %lld\n", s3);

  // Triangular-free but non-rectangular bounds computed from variables.
  int n = 12, cnt = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+ : cnt)
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 2 * n; ++j)
      cnt += (i + j) % 3 == 0;
  printf("count = %d\n", cnt);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: collapse(2) wrote every element once
// CHECK: collapse(2) sum = 35348986
// CHECK: collapse(3) sum = 451030
// CHECK: count = 96
// CHECK-NOT: FAIL
// CHECK: failures: 0
