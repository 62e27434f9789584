// Fixed-size and heap arrays mapped into target regions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

#define N 1000

int main(void) {
  int a[N];
  double b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0.5 * i;
  }
#pragma omp target map(tofrom : a, b)
  for (int i = 0; i < N; ++i) {
    a[i] = a[i] * a[i] - 1;
    b[i] = b[i] * 4.0;
  }
  long long sa = 0;
  double sb = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    sa += a[i];
    sb += b[i];
    bad += a[i] != i * i - 1 || b[i] != 2.0 * i;
  }
  printf("sum a = %lld\n", sa);
  printf("sum b = %.1f\n", sb);
  OT_EXPECT(bad == 0, "fixed arrays element-wise");

  int n = 4096;
  float *x = malloc(n * sizeof(float));
  float *y = malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  float alpha = 2.0f;
#pragma omp target map(to : x[0 : n]) map(tofrom : y[0 : n])
  for (int i = 0; i < n; ++i)
    y[i] = alpha * x[i] + y[i];
  bad = 0;
  for (int i = 0; i < n; ++i)
    bad += y[i] != 2.0f * i + 1.0f;
  OT_EXPECT(bad == 0, "saxpy on heap arrays");
  printf("y[4095] = %.1f\n", y[n - 1]);
  free(x);
  free(y);
  OT_SUMMARY();
  return 0;
}

// CHECK: sum a = 332832500
// CHECK: sum b = 999000.0
// CHECK: PASS: fixed arrays element-wise
// CHECK: PASS: saxpy on heap arrays
// CHECK: y[4095] = 8191.0
// CHECK-NOT: FAIL
// CHECK: failures: 0
