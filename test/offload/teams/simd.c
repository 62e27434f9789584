// simd forms (built with -O3): target teams distribute parallel for simd, target simd, and
// a simd reduction.
//
// RUN: %libomptarget-compileopt-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

#define N 8192

int main(void) {
  float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 64);
    y[i] = 2.0f;
  }

#pragma omp target teams distribute parallel for simd map(to : x) map(tofrom : y)
  for (int i = 0; i < N; ++i)
    y[i] = 3.0f * x[i] + y[i];
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += y[i] != 3.0f * (i % 64) + 2.0f;
  OT_EXPECT(bad == 0, "teams distribute parallel for simd");

  double dot = 0.0;
#pragma omp target teams distribute parallel for simd reduction(+ : dot) map(to : x, y)
  for (int i = 0; i < N; ++i)
    dot += (double)x[i] * y[i];
  printf("dot = %.1f\n", dot);

  int idx[256];
#pragma omp target simd map(from : idx)
  for (int i = 0; i < 256; ++i)
    idx[i] = i * 3;
  printf("idx[255] = %d\n", idx[255]);

  int s = 0;
#pragma omp target map(tofrom : s) map(to : idx)
#pragma omp simd reduction(+ : s)
  for (int i = 0; i < 256; ++i)
    s += idx[i];
  printf("simd sum = %d\n", s);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: teams distribute parallel for simd
// CHECK: dot = 33288192.0
// CHECK: idx[255] = 765
// CHECK: simd sum = 97920
// CHECK-NOT: FAIL
// CHECK: failures: 0
