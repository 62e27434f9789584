// A structured target data region keeps data on the device across several
// target regions; results come back at the end of the region.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 500

int main(void) {
  double a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
  }
#pragma omp target data map(to : a) map(tofrom : b)
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < N; ++i)
      b[i] = a[i] * 2.0;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < N; ++i)
      b[i] += 1.0;
#pragma omp target teams distribute parallel for
    for (int i = 0; i < N; ++i)
      a[i] = -1.0; // device copy only (map(to:))
    printf("inside region: b[10] = %.1f\n", b[10]);
  }
  double s = 0;
  for (int i = 0; i < N; ++i)
    s += b[i];
  printf("after region: b[10] = %.1f sum = %.1f a[10] = %.1f\n", b[10], s, a[10]);

  // Nested target data regions over different variables.
  int x = 1, y = 2;
#pragma omp target data map(tofrom : x)
  {
#pragma omp target data map(tofrom : y)
    {
#pragma omp target map(tofrom : x, y)
      {
        x += 100;
        y += 200;
      }
    }
    printf("after inner: x = %d y = %d\n", x, y);
  }
  printf("after outer: x = %d y = %d\n", x, y);
  return 0;
}

// CHECK: inside region: b[10] = 0.0
// CHECK: after region: b[10] = 21.0 sum = 250000.0 a[10] = 10.0
// CHECK: after inner: x = 1 y = 202
// CHECK: after outer: x = 101 y = 202
