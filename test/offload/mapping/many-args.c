// Many mapped and firstprivate arguments in a single target region.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int main(void) {
  int a0 = 0, a1 = 1, a2 = 2, a3 = 3, a4 = 4, a5 = 5, a6 = 6, a7 = 7;
  int a8 = 8, a9 = 9, a10 = 10, a11 = 11, a12 = 12, a13 = 13, a14 = 14, a15 = 15;
  double d0 = 0.5, d1 = 1.5, d2 = 2.5, d3 = 3.5;
  int arr0[4] = {1, 1, 1, 1}, arr1[4] = {2, 2, 2, 2}, arr2[4] = {3, 3, 3, 3};
  long out = 0;
  double dout = 0;
#pragma omp target map(tofrom : arr0, arr1, arr2) map(from : out, dout)
  {
    out = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 +
          a14 + a15;
    dout = d0 + d1 + d2 + d3;
    for (int i = 0; i < 4; ++i) {
      arr0[i] += a1;
      arr1[i] *= a2;
      arr2[i] -= a3;
    }
  }
  printf("out = %ld dout = %.1f\n", out, dout);
  printf("arrays = %d %d %d\n", arr0[3], arr1[3], arr2[3]);
  return 0;
}

// CHECK: out = 120 dout = 8.0
// CHECK: arrays = 2 4 0
