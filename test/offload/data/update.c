// target update to/from, whole arrays and sections, inside and outside
// target data regions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 64

int main(void) {
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = i;
#pragma omp target data map(to : a)
  {
    for (int i = 0; i < N; ++i)
      a[i] = 1000 + i; // host changes
    int seen = 0;
#pragma omp target map(from : seen)
    seen = a[5];
    printf("before update to: device a[5] = %d\n", seen);
#pragma omp target update to(a[0 : 8])
#pragma omp target map(from : seen)
    seen = a[5] + a[8];
    printf("after partial update to: device a[5] + a[8] = %d\n", seen);

#pragma omp target
    for (int i = 0; i < N; ++i)
      a[i] = -i;
    printf("before update from: host a[20] = %d\n", a[20]);
#pragma omp target update from(a[16 : 16])
    printf("after partial update from: a[15] = %d a[16] = %d a[31] = %d a[32] = %d\n",
           a[15], a[16], a[31], a[32]);
#pragma omp target update from(a)
    printf("after full update from: a[63] = %d\n", a[63]);
  }

  // Several variables in one update, mixed directions.
  int p = 1, q = 2;
  double r = 0.5;
#pragma omp target enter data map(to : p, q, r)
  p = 10;
  q = 20;
#pragma omp target update to(p, q)
#pragma omp target map(tofrom : p, q, r)
  {
    r = p + q + r;
    p = 0;
  }
#pragma omp target update from(r)
  printf("r = %.1f p = %d\n", r, p);
#pragma omp target exit data map(delete : p, q, r)
  return 0;
}

// CHECK: before update to: device a[5] = 5
// CHECK: after partial update to: device a[5] + a[8] = 1013
// CHECK: before update from: host a[20] = 1020
// CHECK: after partial update from: a[15] = 1015 a[16] = -16 a[31] = -31 a[32] = 1032
// CHECK: after full update from: a[63] = -63
// CHECK: r = 30.5 p = 10
